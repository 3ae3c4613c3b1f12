"""The speech API as a Ray Serve application: the same app in each replica, one model and one
continuous batch per replica, and a board so /health and /metrics speak for all of them.
"""
