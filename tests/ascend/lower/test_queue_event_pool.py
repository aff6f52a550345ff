"""The queue bound keeps an event id free for the plan's explicit syncs (docs/ASCEND_MODEL.md section 9).

On Atlas A2 each HardEvent has 8 ids in the TPipe's pool; a VECIN buffer that was freed holds an id of
V_MTE2 until it is allocated again. With 8 VECIN buffers all 8 ids can be held at once, and an explicit
`SetFlag/WaitFlag<V_MTE2>` (a spilled block, a gather window, the Cube hand-off) finds none
(FetchEventID asserts only in debug builds: a release build would use an id a queue holds). The plan
takes at most QUEUE_BUFFERS (7) buffers per TPosition.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import xblock
from tests.ascend.lower.test_addressing import sum8_kernel
from tests.ascend.model.test_model_fidelity import build, kernel_source, metadata
from xblock.backends.ascend.lower.context import QUEUE_BUFFERS
from xblock.errors import ExecutionError

triton = pytest.importorskip("triton")

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++"),
              pytest.mark.filterwarnings("ignore::xblock.errors.XBlockWarning")]


def _pool_body(buffers: int) -> str:
    """`buffers` single-buffered VECIN queues, each used once (so each holds a V_MTE2 id), then the plan's
    explicit V->MTE2 sync, as a spilled block's copy-in emits it, before they are allocated again."""
    decl = "".join(f"    TQue<TPosition::VECIN, 1> q{i};\n    pipe.InitBuffer(q{i}, 1, 64);\n" for i in range(buffers))
    use = "".join(f"""    {{
        LocalTensor<float> t = q{i}.AllocTensor<float>();
        DataCopy(t, xGm, 16);
        q{i}.EnQue(t);
        t = q{i}.DeQue<float>();
        Adds(s, t, 1.0f, 16);
        q{i}.FreeTensor(t);
    }}
""" for i in range(buffers))
    return f"""    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x);
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 128);
    LocalTensor<float> s = calc.Get<float>(16);
    LocalTensor<float> spill = calc.GetWithOffset<float>(16, 64);
{decl}{use}    // planted.py:9: a block spilled to scratch: the vector unit must be done with it before MTE2 writes it
    event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE2));
    SetFlag<HardEvent::V_MTE2>(e);
    WaitFlag<HardEvent::V_MTE2>(e);
    DataCopy(spill, xGm, 16);
    event_t f = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE2_V));
    SetFlag<HardEvent::MTE2_V>(f);
    WaitFlag<HardEvent::MTE2_V>(f);
    Add(s, s, spill, 16);
"""


def _run(buffers: int) -> None:
    name = f"pool{buffers}"
    launch = build(name, kernel_source(name, "GM_ADDR x", _pool_body(buffers)), metadata(name, ["x"], [], []))
    launch((1, 1, 1), [np.arange(16, dtype=np.float32)])


def test_the_queue_bound_leaves_an_id_for_an_explicit_sync():
    assert QUEUE_BUFFERS == 7
    _run(QUEUE_BUFFERS)  # every VECIN buffer used and freed, and the explicit V_MTE2 sync still has an id
    with pytest.raises(ExecutionError, match="TPipe::FetchEventID: no id of HardEvent::V_MTE2 is free: all 8 are held"):
        _run(QUEUE_BUFFERS + 1)  # the old bound, 8: none left


@pytest.mark.parametrize("n", [128 * 100, 300])
def test_a_kernel_at_the_queue_bound_with_a_spill_runs(n):
    """Eight live loads: 7 in VECIN queues, the 8th spilled with explicit V->MTE2 / MTE2->V syncs; with
    many programs per core the queue buffers hold their freed ids while the spill fetches its own."""
    rng = np.random.default_rng(n)
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(8)]
    out = np.zeros(n, np.float32)
    xblock.jit(sum8_kernel)[(triton.cdiv(n, 128),)](*xs, out, n, BLOCK=128, target="ascend")
    a, b, c, d, e, f, g, h = xs
    np.testing.assert_array_equal(out, ((h * g + f) * e + d) * c + b * a)
    sig = {k: "*fp32" if k.endswith("_ptr") else "i32" for k in sum8_kernel.arg_names if k != "BLOCK"}
    ck = xblock.compile(sum8_kernel, target="ascend", signature=sig, constexprs={"BLOCK": 128})
    vecin = [q["buffers"] for q in ck.metadata["ub_plan"]["queues"].values() if q["position"] == "VECIN"]
    assert sum(vecin) == QUEUE_BUFFERS
    assert "pipe.FetchEventID(HardEvent::V_MTE2)" in ck.asm["cpp"]
