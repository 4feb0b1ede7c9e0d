"""The verdict never accepts what a core lane did not vouch for."""

from hypothesis import given
from hypothesis import strategies as st

from patchjudge.config import PropertiesSettings
from patchjudge.report import Decision, LaneReport, RunKey, Status
from patchjudge.verdict import ALL_LANES, CORE_LANES, Unreadable, decide

KEY = RunKey("b" * 40, "h" * 40, "l" * 64, "run")
OTHER = RunKey("x" * 40, "h" * 40, "l" * 64, "run")
SETTINGS = PropertiesSettings(("eval/properties",), 1, 10, 60)

statuses = st.sampled_from(list(Status))


@st.composite
def lane_reports(draw, name):
    kind = draw(st.sampled_from(["ok", "missing", "unreadable", "stale", "wrong-lane"]))
    if kind == "missing":
        return None
    if kind == "unreadable":
        return Unreadable("garbage")
    status = draw(statuses)
    reasons = tuple(draw(st.lists(st.text(min_size=1, max_size=5), max_size=2)))
    key = OTHER if kind == "stale" else KEY
    lane = "other" if kind == "wrong-lane" else name
    return LaneReport(lane, status, reasons, key, {})


all_reports = st.fixed_dictionaries({n: lane_reports(n) for n in ALL_LANES})


@given(all_reports)
def test_accept_only_when_every_lane_vouched(reports):
    verdict = decide(reports, KEY, SETTINGS)
    if verdict.decision is Decision.ACCEPT_FOR_REVIEW:
        for name in ALL_LANES:
            report = reports[name]
            assert isinstance(report, LaneReport), name
            assert report.lane == name and report.key == KEY
            assert report.status in (Status.PASS, Status.NOT_APPLICABLE)


@given(all_reports, st.sampled_from(CORE_LANES))
def test_a_missing_or_failed_core_lane_rejects(reports, lane):
    reports = dict(reports)
    reports[lane] = None
    assert decide(reports, KEY, SETTINGS).decision is Decision.REJECT
    reports[lane] = LaneReport(lane, Status.FAIL, ("broken",), KEY, {})
    assert decide(reports, KEY, SETTINGS).decision is Decision.REJECT


@given(all_reports)
def test_a_rejection_always_says_why(reports):
    verdict = decide(reports, KEY, SETTINGS)
    if verdict.decision is not Decision.ACCEPT_FOR_REVIEW:
        assert verdict.reasons
