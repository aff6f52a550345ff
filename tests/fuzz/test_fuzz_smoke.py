"""A bounded run of the differential fuzzer (tools/fuzz.py): a fixed seed, a few kernels, every target.

Each kernel runs on sim, cpu and ascend (on its CPU model) and compiles to a cubin for cuda, in a
worker process with a timeout. A test fails on a wrong answer, an internal error, code the AscendC
model rejects, a hang or a crash, and on a kernel the generator got wrong. A target saying it cannot
do something ("not supported") passes. Bugs this seed finds today are listed in KNOWN as expected
failures (strict: when one is fixed, its test XPASSes and fails, so the entry must go).

The planted-fault tests check the fuzzer itself: the simulator with a perturbed rule, a launch that
never returns and one that aborts must be caught and classified.
"""

import os
import sys

import pytest

pytest.importorskip("triton")  # the generated kernels are @triton.jit kernels

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import fuzz  # noqa: E402
import fuzz_gen  # noqa: E402

SEED = 6
COUNT = 20
TARGETS = ["sim", "cpu", "ascend", "cuda"]
TIMEOUT = 30.0  # seconds per kernel and target: a hang

# (kernel index, target) -> (failure class, the issue). Found by this seed; see docs/RELIABILITY.md.
KNOWN: dict = {}  # (kernel, target) -> (class, description) of bugs this seed finds today


class KnownBug(AssertionError):
    """The failure listed in KNOWN reproduced (an expected failure)."""


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    r = fuzz.Runner(str(tmp_path_factory.mktemp("fuzz")), timeout=TIMEOUT)
    yield r
    r.close()


def _params():
    for i in range(COUNT):
        known = [(t, KNOWN[(i, t)]) for t in TARGETS if (i, t) in KNOWN]
        why = "; ".join(f"{t}: {c}: {issue}" for t, (c, issue) in known)
        marks = [pytest.mark.xfail(strict=True, raises=KnownBug, reason=why)] if known else []
        yield pytest.param(i, marks=marks, id=f"kernel{i}")


@pytest.mark.parametrize("index", list(_params()))
def test_fuzz_smoke(runner, index):
    k = fuzz_gen.generate(SEED, index)
    results, prep = runner.run(k, TARGETS)
    unexpected, known = [], []
    for t, (outcome, detail, _) in results.items():
        if outcome in ("ok", "not-supported"):
            continue
        entry = KNOWN.get((index, t))
        line = f"{t}: {outcome}: {fuzz.short_detail(detail)[:300]}"
        (known if entry and entry[0] == outcome else unexpected).append(line)
    if unexpected:
        raise AssertionError(f"seed {SEED} kernel {index} ({prep['path']}):\n" + "\n".join(unexpected)
                             + f"\nreplay: python tools/fuzz.py --seed {SEED} --first {index} --count 1")
    if known:
        raise KnownBug("\n".join(known))


# ------------------------------------------------------------------------------ the fuzzer's self-check
PLANTED = "sim-planted=tests.fuzz.planted_target"


@pytest.fixture
def planted(monkeypatch, tmp_path):
    """A Runner whose worker knows the "sim-planted" target; the fault is set by the test."""
    monkeypatch.setenv("XBLOCK_FUZZ_EXTRA_TARGETS", PLANTED)
    monkeypatch.syspath_prepend(ROOT)

    def make(fault, timeout=TIMEOUT):
        monkeypatch.setenv("XBLOCK_PLANTED_FAULT", fault)
        return fuzz.Runner(str(tmp_path), timeout=timeout)

    return make


def _outcomes(runner, seed, indices):
    try:
        return [runner.run(fuzz_gen.generate(seed, i), ["sim", "sim-planted"])[0]["sim-planted"] for i in indices]
    finally:
        runner.close()


def test_planted_wrong_answer_is_caught(planted):
    outcomes = _outcomes(planted("addi"), 5, range(6))
    assert any(o == "wrong-answer" for o, _, _ in outcomes), outcomes


def test_planted_hang_and_abort_are_caught(planted):
    (o, d, _), = _outcomes(planted("hang", timeout=5.0), SEED, [0])
    assert o == "hang", d
    (o, d, _), = _outcomes(planted("abort"), SEED, [0])
    assert o == "internal-error" and "died" in d, d


# ------------------------------------------------------------------------------ program coarsening
COARSENED = "sim-coarsened=tests.fuzz.coarsened_target"


def test_coarsened_kernels_agree_with_the_sim(monkeypatch, tmp_path):
    """xb-coarsen-programs on generated kernels: the sim running each kernel coarsened (R = 4 rows per
    instance tile, 1 to 4 of them the instance's) must agree with the sim running it as written.
    `make fuzz`-sized runs: tools/fuzz.py --targets sim,sim-coarsened (2000 kernels, 0 failures, in
    docs/RELIABILITY.md)."""
    monkeypatch.setenv("XBLOCK_FUZZ_EXTRA_TARGETS", COARSENED)
    monkeypatch.syspath_prepend(ROOT)
    runner = fuzz.Runner(str(tmp_path), timeout=TIMEOUT)
    try:
        bad = []
        for i in range(60):
            results, prep = runner.run(fuzz_gen.generate(63, i), ["sim", "sim-coarsened"])
            outcome, detail, _ = results["sim-coarsened"]
            if outcome not in ("ok", "not-supported"):
                bad.append(f"kernel {i}: {outcome}: {fuzz.short_detail(detail)[:200]}")
        assert not bad, "\n".join(bad)
    finally:
        runner.close()
