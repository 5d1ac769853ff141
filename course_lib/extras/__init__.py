"""extras"""
