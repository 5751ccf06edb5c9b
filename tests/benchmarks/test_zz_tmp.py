def test_profile(transactional_db):
    import cProfile, pstats, time, statistics
    from django.test import Client
    from tests.benchmarks.test_annotation_bench import paper_scale
    from tests.annotation.data import annotator

    study = paper_scale()
    users = [annotator(f"prof-{i}") for i in range(3)]
    study.annotators.add(*users)
    client = Client()
    client.force_login(users[0])
    client.get("/api/annotate/summary/")

    def one():
        token = client.post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
        return token

    toks = []
    for _ in range(5):
        toks.append(one())
        client.post(
            "/api/annotate/submit/",
            {"token": toks[-1], "outcome": "a", "dwell_ms": 4000},
            content_type="application/json",
        )
    pr = cProfile.Profile()
    times = []
    for _ in range(40):
        t = time.perf_counter()
        pr.enable()
        tok = one()
        pr.disable()
        times.append(time.perf_counter() - t)
        client.post(
            "/api/annotate/submit/", {"token": tok, "outcome": "a", "dwell_ms": 4000}, content_type="application/json"
        )
    print("next median ms", statistics.median(times) * 1000)
    st = pstats.Stats(pr)
    st.sort_stats("tottime")
    st.print_stats(25)
    st.sort_stats("cumtime")
    st.print_stats(60)
