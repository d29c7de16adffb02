"""Issue 20's admin API driven as an app's backend drives it (scripts/e2e/98-admin-users.sh): import 100 profiles in
one signed call and read them back, sign two of them in with sockets, ask who is online, ban one (its socket hears
`session_ended {reason: banned}` and closes 4501, its signed login answers 1043), unban, and read the statistics.
Settings come from the environment (see client.py: SEEDS_BASE, SEEDS_APP_KEY, SEEDS_APP_SECRET)."""
import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "seeds"))
import client  # noqa: E402
from client import check  # noqa: E402


admin = client.signed


def data(answer, what):
    check(answer.status == 200 and answer.code == 0, f"{what}: {answer}")
    return answer.body["data"]


def signed_login(user_id, platform):
    return client.signed("POST", "/api/im/auth/login",
                         {"appKey": client.APP_KEY, "userId": user_id, "platform": platform})


async def main():
    users = [{"userId": f"biz-{i:03}", "nickname": f"Member {i}", "signature": f"joined #{i}",
              "ex": {"vip": i % 10 == 0, "level": i}} for i in range(100)]
    imported = data(admin("POST", "/api/admin/users", {"users": users}), "import 100 profiles")
    check(imported["created"] == 100 and imported["failed"] == 0, f"import: {imported}")
    check([r["userId"] for r in imported["results"]] == [u["userId"] for u in users], "results in the order sent")
    for i in (0, 57, 99):
        user = data(admin("GET", f"/api/admin/users/biz-{i:03}"), f"read biz-{i:03}")
        check(user["nickname"] == f"Member {i}" and user["ex"] == {"vip": i % 10 == 0, "level": i}
              and user["managedByApp"] and not user["banned"], f"biz-{i:03} as imported: {user}")
    again = data(admin("POST", "/api/admin/users", {"users": [{"userId": "biz-001", "nickname": "Renamed"}]}),
                 "upsert")
    check(again["updated"] == 1, f"upsert updates: {again}")
    refused = admin("POST", "/api/admin/users", {"users": [{"userId": f"x{i}"} for i in range(101)]})
    client.refused(refused, "101 users", 1002)
    client.refused(admin("GET", "/api/admin/users/no-such-user"), "unknown user", 1050)

    # Two imported users sign in (the backend's signed login) and open sockets; a third only signs in.
    alice_login = data(signed_login("biz-010", "ios"), "signed login biz-010")
    bob_login = data(signed_login("biz-020", "android"), "signed login biz-020")
    data(signed_login("biz-030", "web"), "signed login biz-030")
    alice = await client.Device("biz-010", alice_login["token"]).connect()
    bob = await client.Device("biz-020", bob_login["token"]).connect()

    deadline = time.monotonic() + 10
    while True:
        online = data(admin("POST", "/api/admin/online", {"userIds": ["biz-010", "biz-020", "biz-030"]}), "online")
        state = {u["userId"]: u for u in online["users"]}
        if state["biz-010"]["online"] and state["biz-020"]["online"]:
            break
        check(time.monotonic() < deadline, f"online state never showed both sockets: {online}")
        await asyncio.sleep(0.1)
    check(state["biz-010"]["platforms"] == ["ios"] and state["biz-020"]["platforms"] == ["android"],
          f"platforms: {state}")
    check(not state["biz-030"]["online"], f"signed in without a socket is offline: {state}")

    # The ban ends the session everywhere: the socket is told why and closed 4501; logins answer 1043.
    banned = data(admin("POST", "/api/admin/users/biz-010/ban"), "ban biz-010")
    check(banned["banned"] and banned["endedSessions"] == 1, f"ban: {banned}")
    await alice.event("session_ended", "the ban's session_ended", reason="banned")
    check(await alice.closed("banned") == 4501, "the banned socket closes 4501")
    client.refused(signed_login("biz-010", "ios"), "a banned user's signed login", 1043)
    client.refused(client.http("GET", "/api/users/me", token=alice_login["accessToken"]), "a banned token", 1034)
    check(await bob.still_open(), "another user's socket stays")
    data(admin("POST", "/api/admin/users/biz-010/unban"), "unban biz-010")
    data(signed_login("biz-010", "ios"), "signed login after the unban")

    # Statistics: 100 users; Bob's messages counted once the server flushes (PARLEY_STATS_FLUSH_SECONDS=1 here).
    for i in range(3):
        await bob.request("send", {"toId": "biz-030", "chatType": "single", "msgType": "text",
                                   "content": f"hello {i}"})
    deadline = time.monotonic() + 10
    while True:
        stats = data(admin("GET", "/api/admin/stats?days=2"), "stats")
        if stats["messages"][-1]["count"] >= 3 and stats["activeUsers"][-1]["count"] >= 3:
            break
        check(time.monotonic() < deadline, f"stats never counted the sends and sign-ins: {stats}")
        await asyncio.sleep(0.2)
    check(stats["users"]["total"] == 100, f"users: {stats['users']}")
    check(len(stats["messages"]) == 2 and stats["messages"][-1]["count"] == 3, f"messages: {stats['messages']}")
    check(stats["activeUsers"][-1]["count"] == 3, f"active users: {stats['activeUsers']}")
    check(stats["online"]["users"] >= 1, f"online: {stats['online']}")
    await bob.ws.close()
    print("admin API: 100 profiles imported, online state read, a ban closed its socket (4501) and refused "
          "logins (1043), statistics counted")


asyncio.run(main())
