-- The same POST on every request (wrk builds it once): BENCH_BODY as JSON, with the
-- Authorization header BENCH_AUTHORIZATION.
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = os.getenv("BENCH_AUTHORIZATION")
