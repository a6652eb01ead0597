"""Argument checking and run-time errors on the C backend: each names the
entry, the argument and what was expected."""

import numpy as np
import pytest

import gpuc
from conftest import EXAMPLES


@pytest.fixture(scope="module")
def saxpy():
    return gpuc.compile(EXAMPLES / "saxpy.gdsl").saxpy


@pytest.fixture(scope="module")
def matmul():
    return gpuc.compile(EXAMPLES / "matmul.gdsl").matmul


def test_wrong_dtype_is_a_type_error(saxpy):
    x = np.ones(3, dtype=np.float64)
    with pytest.raises(TypeError, match=r"saxpy: argument 'x' must have dtype float32 \(f32\), got float64"):
        saxpy(1.0, x, np.ones(3, np.float32))


def test_wrong_rank_is_a_value_error(saxpy):
    with pytest.raises(ValueError, match=r"saxpy: argument 'y' must have 1 dimension \(f32\[n\]\), got 2"):
        saxpy(1.0, np.ones(4, np.float32), np.ones((2, 2), np.float32))


def test_not_an_array(saxpy):
    with pytest.raises(TypeError, match="argument 'x' must be a numpy array of float32"):
        saxpy(1.0, [1.0, 2.0], np.ones(2, np.float32))


def test_scalar_type_checks(saxpy):
    x = np.ones(2, np.float32)
    with pytest.raises(TypeError, match="argument 'a' must be a number"):
        saxpy("2", x, x)
    m = gpuc.compile("entry k(a: i32, x: i32[n]) -> i32[n] = x + a;")
    with pytest.raises(TypeError, match="argument 'a' must be an integer"):
        m.k(1.5, np.ones(2, np.int32))
    with pytest.raises(OverflowError, match="does not fit in i32"):
        m.k(2 ** 40, np.ones(2, np.int32))


def test_size_mismatch_names_both_arguments(saxpy):
    with pytest.raises(ValueError, match=r"saxpy: size mismatch: argument 'y' \(dimension 0\) has n = 4 "
                                         r"but argument 'x' \(dimension 0\) gave n = 3"):
        saxpy(1.0, np.ones(3, np.float32), np.ones(4, np.float32))


def test_size_mismatch_2d(matmul):
    with pytest.raises(ValueError, match="has k = 4 but argument 'A' .* gave k = 3"):
        matmul(np.ones((2, 3)), np.ones((4, 2)))


def test_non_contiguous_arrays_are_copied(saxpy, matmul):
    x = np.arange(10, dtype=np.float32)[::2]
    y = np.ones(5, dtype=np.float32)
    np.testing.assert_array_equal(saxpy(3.0, x, y), 3 * x + y)
    A = np.random.default_rng(1).random((4, 3))
    B = np.random.default_rng(2).random((4, 5))
    np.testing.assert_allclose(matmul(A.T, B), A.T @ B, rtol=1e-12)


def test_index_out_of_bounds_is_a_gpuc_error():
    m = gpuc.compile(EXAMPLES / "permute.gdsl")
    x = np.arange(4, dtype=np.float32)
    perm = np.array([0, 1, 2, 9], dtype=np.int64)
    with pytest.raises(gpuc.ExecutionError, match=r"^apply_perm: index 9 out of bounds for size 4$") as info:
        m.apply_perm(x, perm)
    assert isinstance(info.value, gpuc.Error) and info.value.entry == "apply_perm"
    # the entry still works afterwards
    np.testing.assert_array_equal(m.apply_perm(x, np.array([3, 2, 1, 0], dtype=np.int64)), x[::-1])


FILTER_ADD = """entry f(x: f32[n], y: f32[n]) -> f32[_] {
    let p = filter(|v| v > 0.0, x);
    return p + y;
}
"""


def test_run_time_size_mismatch_is_a_gpuc_error():
    # the filter keeps 3 of 4: its result meets y's 4 elements (docs/language.md)
    m = gpuc.compile(FILTER_ADD, backend="c")
    x = np.array([1, -2, 3, 4], dtype=np.float32)
    y = np.array([10, 20, 30, 40], dtype=np.float32)
    with pytest.raises(gpuc.ExecutionError, match=r"size mismatch in operator '\+': 3 vs 4") as info:
        m.f(x, y)
    assert info.value.entry == "f"
    # every element kept: the sizes are equal at run time
    np.testing.assert_array_equal(m.f(np.array([1, 2, 3], dtype=np.float32), np.array([10, 20, 30], dtype=np.float32)),
                                  np.array([11, 22, 33], dtype=np.float32))


def test_struct_argument_errors():
    m = gpuc.compile(EXAMPLES / "points.gdsl")
    with pytest.raises(TypeError, match="must be a dict with the fields x, y of Point; missing y"):
        m.move({"x": np.ones(2, np.float32)})
    with pytest.raises(TypeError, match=r"argument 'ps.y' must have dtype float32"):
        m.move({"x": np.ones(2, np.float32), "y": np.ones(2)})
    with pytest.raises(ValueError, match="size mismatch"):
        m.move({"x": np.ones(2, np.float32), "y": np.ones(3, np.float32)})
