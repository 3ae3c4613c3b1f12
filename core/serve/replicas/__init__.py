"""The speech API as a Ray Serve application: the same app (routes, key, Host/Origin rules,
page, SSE, captions, metrics) in each replica, one loaded model and one continuous batch per
replica, a board the replicas report to so /health and /metrics speak for all of them."""
