"""Benchmark: replaying tau-bench trajectories with ``tools=``, copy-on-write against whole-database copies.

Run: ``.venv/bin/python bench/bench_taubench_replay.py`` (``--limit N`` replays only the first N
trajectories, for a quick run).

The data is the shared gpt-4o airline run (``../shared/data/tau-bench-airline``: 200 trajectories over 50
tasks, and the airline database of 300 flights, 2,000 reservations and 500 users). The tools are airline
tool functions written here from tau-bench's published airline tools (``name -> callable(data, **kwargs)``
mutating the database in place, as tau-bench's ``Tool.invoke``); their results agree with the replay the
shared data was made with (checked by ``tests/integrations/test_taubench_replay.py``).

Both arms run in the same invocation, each in a fresh child process so that its peak resident memory
(``ru_maxrss``) is its own:

- **old**: a faithful copy of what ``load_run(tools=...)`` did before copy-on-write: the results file
  imported, then for every trajectory and every task a deep copy of the whole database, the calls run on
  it, the result canonicalised into a full snapshot, and every snapshot kept;
- **new**: :func:`judgekit.integrations.taubench.load_run` with ``tools=`` (copy-on-write tables, each
  state a delta over the one shared initial database).

Each arm's time covers reading the results file, reading the database and every replay (wall and CPU).
After the timing, each arm writes the digest of every state it made; the run checks they are equal
before printing figures. Printed: time, peak memory, and the ratios old / new (the machine is shared,
so the ratios are the figures to compare).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import operator
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DATA = Path(os.environ.get("JUDGEKIT_SHARED_DATA", ROOT / ".." / "shared" / "data")) / "tau-bench-airline"

# --------------------------------------------------------------------------- airline tools
#
# Written from the behaviour of tau-bench's airline tools (sierra-research/tau-bench,
# tau_bench/envs/airline/tools): each takes the database and the call's keyword arguments, mutates the
# database in place, and returns the observation text. A rule the tool checks gives an "Error: ..." text
# (nothing changed); a missing key or a wrong argument raises, and tau-bench's environment turns that into
# an "Error: ..." observation as well.


def _reservation_json(reservation: Mapping[str, Any]) -> str:
    return json.dumps(reservation)


def get_reservation_details(data: dict[str, Any], reservation_id: str) -> str:
    reservations = data["reservations"]
    if reservation_id not in reservations:
        return "Error: reservation not found"
    return _reservation_json(reservations[reservation_id])


def get_user_details(data: dict[str, Any], user_id: str) -> str:
    users = data["users"]
    if user_id not in users:
        return "Error: user not found"
    return json.dumps(users[user_id])


def _flight_summary(flight: Mapping[str, Any], date: str, date_info: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in flight.items() if key != "dates"}
    out.update(date_info)
    out["date"] = date
    return out


def search_direct_flight(data: dict[str, Any], origin: str, destination: str, date: str) -> str:
    found = []
    for flight in data["flights"].values():
        if flight["origin"] != origin or flight["destination"] != destination:
            continue
        info = flight["dates"].get(date)
        if info is not None and info["status"] == "available":
            summary = _flight_summary(flight, date, info)
            del summary["date"]
            found.append(summary)
    return json.dumps(found)


def search_onestop_flight(data: dict[str, Any], origin: str, destination: str, date: str) -> str:
    flights = list(data["flights"].values())
    found = []
    for first in flights:
        if first["origin"] != origin:
            continue
        for second in flights:
            if second["destination"] != destination or first["destination"] != second["origin"]:
                continue
            arrives_next_day = "+1" in first["scheduled_arrival_time_est"]
            date2 = f"2024-05-{int(date[-2:]) + 1}" if arrives_next_day else date
            if first["scheduled_arrival_time_est"] > second["scheduled_departure_time_est"]:
                continue
            if date not in first["dates"] or date2 not in second["dates"]:
                continue
            if first["dates"][date]["status"] != "available":
                continue
            if second["dates"][date2]["status"] != "available":
                continue
            leg2 = _flight_summary(second, date2, second["dates"][date])
            found.append([_flight_summary(first, date, first["dates"][date]), leg2])
    return json.dumps(found)


def list_all_airports(data: dict[str, Any]) -> str:
    codes = sorted({f[k] for f in data["flights"].values() for k in ("origin", "destination")})
    return json.dumps(codes)


_OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ValueError("only numbers, + - * / and parentheses are allowed")


def calculate(data: dict[str, Any], expression: str) -> str:
    if not all(ch in "0123456789+-*/(). " for ch in expression):
        return "Error: invalid characters in expression"
    return str(round(float(_evaluate(ast.parse(expression, mode="eval"))), 2))


def think(data: dict[str, Any], thought: str) -> str:
    return ""


def transfer_to_human_agents(data: dict[str, Any], summary: str) -> str:
    return "Transfer successful"


def _charge(user: Mapping[str, Any], payment_id: str, total: float) -> str | None:
    """Why the payment method cannot pay ``total`` for an update, or ``None`` when it can."""
    if payment_id not in user["payment_methods"]:
        return "Error: payment method not found"
    method = user["payment_methods"][payment_id]
    if method["source"] == "certificate":
        return "Error: certificate cannot be used to update reservation"
    if method["source"] == "gift_card" and method["amount"] < total:
        return "Error: gift card balance is not enough"
    return None


def book_reservation(
    data: dict[str, Any],
    *,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: str,
    cabin: str,
    flights: list[dict[str, Any]],
    passengers: list[dict[str, Any]],
    payment_methods: list[dict[str, Any]],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: str,
) -> str:
    reservations, users = data["reservations"], data["users"]
    if user_id not in users:
        return "Error: user not found"
    user = users[user_id]
    reservation_id = next(r for r in ("HATHAT", "HATHAU", "HATHAV") if r not in reservations)
    legs = copy.deepcopy(flights)
    total = 0
    for leg in legs:
        number = leg["flight_number"]
        if number not in data["flights"]:
            return f"Error: flight {number} not found"
        flight = data["flights"][number]
        if leg["date"] not in flight["dates"]:
            return f"Error: flight {number} not found on date {leg['date']}"
        info = flight["dates"][leg["date"]]
        if info["status"] != "available":
            return f"Error: flight {number} not available on date {leg['date']}"
        if info["available_seats"][cabin] < len(passengers):
            return f"Error: not enough seats on flight {number}"
        leg["price"] = info["prices"][cabin]
        leg["origin"] = flight["origin"]
        leg["destination"] = flight["destination"]
        total += leg["price"] * len(passengers)
    if insurance == "yes":
        total += 30 * len(passengers)
    total += 50 * nonfree_baggages
    for payment in payment_methods:
        pid = payment["payment_id"]
        if pid not in user["payment_methods"]:
            return f"Error: payment method {pid} not found"
        method = user["payment_methods"][pid]
        if method["source"] in ("gift_card", "certificate") and method["amount"] < payment["amount"]:
            return f"Error: not enough balance in payment method {pid}"
    paid = sum(p["amount"] for p in payment_methods)
    if paid != total:
        return f"Error: payment amount does not add up, total price is {total}, but paid {paid}"
    for payment in payment_methods:
        pid = payment["payment_id"]
        method = user["payment_methods"][pid]
        if method["source"] == "gift_card":
            method["amount"] -= payment["amount"]
        elif method["source"] == "certificate":
            del user["payment_methods"][pid]
    reservation = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": legs,
        "passengers": passengers,
        "payment_history": payment_methods,
        "created_at": "2024-05-15T15:00:00",
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    reservations[reservation_id] = reservation
    user["reservations"].append(reservation_id)
    return _reservation_json(reservation)


def cancel_reservation(data: dict[str, Any], reservation_id: str) -> str:
    reservations = data["reservations"]
    if reservation_id not in reservations:
        return "Error: reservation not found"
    reservation = reservations[reservation_id]
    refunds = [
        {"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]
    ]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return _reservation_json(reservation)


def update_reservation_baggages(
    data: dict[str, Any], reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
) -> str:
    users, reservations = data["users"], data["reservations"]
    if reservation_id not in reservations:
        return "Error: reservation not found"
    reservation = reservations[reservation_id]
    total = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    user = users[reservation["user_id"]]
    refused = _charge(user, payment_id, total)
    if refused:
        return refused
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    method = user["payment_methods"][payment_id]
    if method["source"] == "gift_card":
        method["amount"] -= total
    if total != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total})
    return _reservation_json(reservation)


def update_reservation_flights(
    data: dict[str, Any], reservation_id: str, cabin: str, flights: list[dict[str, Any]], payment_id: str
) -> str:
    users, reservations = data["users"], data["reservations"]
    if reservation_id not in reservations:
        return "Error: reservation not found"
    reservation = reservations[reservation_id]
    seats = len(reservation["passengers"])
    legs = copy.deepcopy(flights)
    total = 0
    for leg in legs:
        kept = [
            f
            for f in reservation["flights"]
            if f["flight_number"] == leg["flight_number"]
            and f["date"] == leg["date"]
            and cabin == reservation["cabin"]
        ]
        if kept:
            leg["price"], leg["origin"], leg["destination"] = (
                kept[0]["price"],
                kept[0]["origin"],
                kept[0]["destination"],
            )
            total += leg["price"] * seats
            continue
        number = leg["flight_number"]
        if number not in data["flights"]:
            return f"Error: flight {number} not found"
        flight = data["flights"][number]
        if leg["date"] not in flight["dates"]:
            return f"Error: flight {number} not found on date {leg['date']}"
        info = flight["dates"][leg["date"]]
        if info["status"] != "available":
            return f"Error: flight {number} not available on date {leg['date']}"
        if info["available_seats"][cabin] < seats:
            return f"Error: not enough seats on flight {number}"
        leg["price"] = info["prices"][cabin]
        leg["origin"] = flight["origin"]
        leg["destination"] = flight["destination"]
        total += leg["price"] * seats
    total -= sum(f["price"] for f in reservation["flights"]) * seats
    user = users[reservation["user_id"]]
    refused = _charge(user, payment_id, total)
    if refused:
        return refused
    method = user["payment_methods"][payment_id]
    if method["source"] == "gift_card":
        method["amount"] -= total
    reservation["flights"] = legs
    if total != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total})
    return _reservation_json(reservation)


def update_reservation_passengers(
    data: dict[str, Any], reservation_id: str, passengers: list[dict[str, Any]]
) -> str:
    reservations = data["reservations"]
    if reservation_id not in reservations:
        return "Error: reservation not found"
    reservation = reservations[reservation_id]
    if len(passengers) != len(reservation["passengers"]):
        return "Error: number of passengers does not match"
    reservation["passengers"] = passengers
    return _reservation_json(reservation)


def send_certificate(data: dict[str, Any], user_id: str, amount: int) -> str:
    users = data["users"]
    if user_id not in users:
        return "Error: user not found"
    user = users[user_id]
    for number in (3221322, 3221323, 3221324):
        payment_id = f"certificate_{number}"
        if payment_id not in user["payment_methods"]:
            user["payment_methods"][payment_id] = {
                "source": "certificate",
                "amount": amount,
                "id": payment_id,
            }
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    return "Error: too many certificates"


AIRLINE_TOOLS: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        book_reservation,
        calculate,
        cancel_reservation,
        get_reservation_details,
        get_user_details,
        list_all_airports,
        search_direct_flight,
        search_onestop_flight,
        send_certificate,
        think,
        transfer_to_human_agents,
        update_reservation_baggages,
        update_reservation_flights,
        update_reservation_passengers,
    )
}
"""The airline domain's tools by name."""


# --------------------------------------------------------------------------- the two arms


def old_replay(results: Path, db: Path) -> dict[str, Any]:
    """What ``load_run(tools=...)`` did before copy-on-write: a deep copy of the database per replay.

    The import is ``load_run`` without tools (the results file and the database read as before); the
    replay loop is the old one, verbatim in effect: ``replay_actions`` deep-copied ``initial.to_data()``
    for each trajectory and each task, and ``_snapshot`` canonicalised the whole result; every snapshot
    was kept.
    """
    from judgekit.integrations.taubench import load_run
    from judgekit.state import Snapshot, load_state, snapshot_from_data

    run = load_run(results, db=db)
    initial = load_state(db)
    initial_data = initial.to_data()
    snapshots: dict[str, Snapshot] = {"tau-bench:db": initial}

    def replay(calls: list[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
        data = copy.deepcopy(dict(initial_data))
        for name, kwargs in calls:
            tool = AIRLINE_TOOLS.get(name)
            if tool is None:
                continue
            try:
                tool(data, **dict(kwargs))
            except Exception:  # a tool's own error is an episode fact
                continue
        return data

    trials = run.trials
    for trial in trials:
        t = trial.transcript
        calls = [(c.call.name, c.call.arguments or {}) for c in t.calls()]
        snapshots[f"tau-bench:final/{t.case_id}/{t.trial}"] = snapshot_from_data(replay(calls), source="old")
    for case_id in dict.fromkeys(trial.transcript.case_id for trial in trials):
        meta = next(tr.transcript.metadata for tr in trials if tr.transcript.case_id == case_id)
        actions = [(a["name"], a.get("kwargs") or {}) for a in meta["expected_actions"]]
        snapshots[f"tau-bench:expected/{case_id}"] = snapshot_from_data(replay(actions), source="old")
    return snapshots


def new_replay(results: Path, db: Path) -> dict[str, Any]:
    """``load_run(tools=...)`` as it is now (copy-on-write replay), and the states it made."""
    from judgekit.integrations.taubench import load_run
    from judgekit.state import load_state

    run = load_run(results, db=db, tools=AIRLINE_TOOLS)
    snapshots: dict[str, Any] = {"tau-bench:db": load_state(db)}
    for trial in run.trials:
        t = trial.transcript
        snapshots[f"tau-bench:final/{t.case_id}/{t.trial}"] = run.states.final(t)
    for case_id, case in run.cases.items():
        snapshots[f"tau-bench:expected/{case_id}"] = run.states.expected(case)
    return snapshots


def child(arm: str, limit: int | None, out: Path) -> None:
    """Run one arm, then write its time, peak memory and state digests to ``out``."""
    import gc

    results, db = DATA / "gpt-4o-airline.raw.json", DATA / "db"
    if limit is not None:
        episodes = json.loads(results.read_text(encoding="utf-8"))[:limit]
        results = out.with_suffix(".results.json")
        results.write_text(json.dumps(episodes), encoding="utf-8")
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall, cpu = time.perf_counter(), time.process_time()
    snapshots = (old_replay if arm == "old" else new_replay)(results, db)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    digests = {key: snap.digest() for key, snap in snapshots.items()}
    out.write_text(
        json.dumps({"wall": wall, "cpu": cpu, "peak_kb": peak, "before_kb": rss_before, "digests": digests}),
        encoding="utf-8",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="replay only the first N trajectories")
    parser.add_argument("--arms", default="old,new", help="arms to run, comma-separated (old, new)")
    parser.add_argument("--child", choices=("old", "new"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.limit, args.out)
        return
    if not (DATA / "gpt-4o-airline.raw.json").is_file():
        sys.exit(f"shared tau-bench data not found at {DATA}")
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for arm in args.arms.split(","):
            out = Path(tmp) / f"{arm}.json"
            command = [sys.executable, __file__, "--child", arm, "--out", str(out)]
            if args.limit is not None:
                command += ["--limit", str(args.limit)]
            subprocess.run(command, check=True)
            figures[arm] = json.loads(out.read_text(encoding="utf-8"))
            f = figures[arm]
            print(
                f"{arm:>4}: {len(f['digests']) - 1} states, wall {f['wall']:7.2f} s, cpu {f['cpu']:7.2f} s, "
                f"peak RSS {f['peak_kb'] / 1024:7.0f} MB (before the run {f['before_kb'] / 1024:.0f} MB)"
            )
    if "old" in figures and "new" in figures:
        old, new = figures["old"], figures["new"]
        if old["digests"] != new["digests"]:
            differ = sorted(k for k in old["digests"] if old["digests"][k] != new["digests"].get(k))
            sys.exit(f"the arms made different states: {differ[:5]} ({len(differ)} in all)")
        print(f"states identical: {len(new['digests'])} digests equal")
        print(
            f"ratio old / new: wall {old['wall'] / new['wall']:.1f}x, cpu {old['cpu'] / new['cpu']:.1f}x, "
            f"peak RSS {old['peak_kb'] / new['peak_kb']:.1f}x"
        )


if __name__ == "__main__":
    main()
