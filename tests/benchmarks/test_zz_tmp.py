def test_steps(transactional_db):
    import time, statistics, functools
    from django.test import Client
    from tests.benchmarks.test_annotation_bench import paper_scale
    from tests.annotation.data import annotator
    from annotation import selectors, api
    from annotation.services import engine, counters
    import core.auth

    study = paper_scale()
    users = [annotator(f"prof-{i}") for i in range(3)]
    study.annotators.add(*users)
    client = Client()
    client.force_login(users[0])
    client.get("/api/annotate/summary/")
    spent = {}

    def timed(mod, name):
        f = getattr(mod, name)

        @functools.wraps(f)
        def w(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent.setdefault(name, []).append((time.perf_counter() - t) * 1000)

        setattr(mod, name, w)

    timed(selectors, "studies_for_annotator")
    timed(engine, "_mine")
    timed(engine, "_pick_in_pair")
    timed(engine, "_lease_open")
    timed(engine, "_fresh_lease")
    timed(engine, "item_next")
    timed(selectors, "lease_payload")
    timed(core.auth.RoleAwareModelBackend, "get_user")
    total = []
    for _ in range(40):
        t = time.perf_counter()
        tok = client.post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
        total.append((time.perf_counter() - t) * 1000)
        client.post(
            "/api/annotate/submit/", {"token": tok, "outcome": "a", "dwell_ms": 4000}, content_type="application/json"
        )
    print("next total", round(statistics.median(total), 2))
    for k, v in spent.items():
        print(k, round(statistics.median(v), 2))
