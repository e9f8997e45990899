"""Counts in symbolic dims (issue #57): products, sums, binding, text, and the inputs that make a count unknown."""

from __future__ import annotations

from explorer.models.count import LIMIT, ZERO, Count, total


def test_a_product_of_sizes_and_names_is_a_monomial():
    count = Count.product([2, "seq", 4096, 4096])
    assert count.terms == {(("seq", 1),): 2 * 4096 * 4096}
    assert count.value is None and count.symbols == {"seq"}
    assert count.text() == "33,554,432·seq"
    assert Count.product(["batch", "seq", "seq", 8]).text() == "8·batch·seq²"
    assert Count.product([]).value == 1


def test_sums_collect_like_terms_and_drop_zeros():
    a = Count.product(["seq", 4]) + Count.product([3, "seq"]) + Count.of(5)
    assert a.terms == {(("seq", 1),): 7, (): 5}
    assert a.text() == "7·seq + 5"
    assert (Count.of(3) + Count.of(-3)) == ZERO and ZERO.value == 0
    assert total([Count.of(1), Count.of(2), Count.product(["n"])]).text() == "n + 3"


def test_binding_dims_gives_a_number_or_keeps_the_rest_symbolic():
    count = Count.product(["batch", "seq", 64]) + Count.product(["seq", "seq"])
    assert count.bind({"batch": 1, "seq": 2048}).value == 2048 * 64 + 2048 * 2048
    partly = count.bind({"batch": 2})
    assert partly.terms == {(("seq", 1),): 128, (("seq", 2),): 1}
    assert count.bind({"seq": 0}).unknown == "seq = 0 is not a size"
    assert count.bind({"other": 5}) is count


def test_zero_negative_unnamed_and_huge_dims_are_unknown_with_the_reason():
    assert Count.product([4, 0]).unknown == "a dim of 0"
    assert Count.product([-1, 4]).unknown == "a dim of -1"
    assert Count.product([4, ""]).unknown == "a dim has no size and no name"
    assert Count.product([2**40, 2**40]).unknown == "more than 2^63"
    assert Count.product(["n"]).bind({"n": LIMIT}).unknown == "more than 2^63"
    assert (Count.of(LIMIT - 1) + Count.of(1)).unknown == "more than 2^63"
    unknown = Count.not_known("why")
    assert (unknown + Count.of(3)).unknown == "why" and (Count.of(3) * unknown).unknown == "why"
    assert unknown.text() == "unknown" and unknown.value is None


def test_products_of_counts_multiply_their_terms():
    product = (Count.product(["seq"]) + Count.of(1)) * Count.product(["seq", 2])
    assert product.terms == {(("seq", 2),): 2, (("seq", 1),): 2}
    assert (Count.of(3) * 4).value == 12


def test_a_product_drops_the_terms_that_cancel():
    """(seq + 1)(seq − 1) = seq² − 1: the seq terms cancel and no 0·seq is kept (issue #74: a mutation that kept
    zero terms passed 24 tests)."""
    plus = Count.product(["seq"]) + Count.of(1)
    minus = Count.product(["seq"]) + Count.of(-1)
    product = plus * minus
    assert product.terms == {(("seq", 2),): 1, (): -1}
    assert "0·" not in product.text() and product.value is None
    assert (Count.product(["n"]) * Count.of(0)) == ZERO and (Count.product(["n"]) * 0).value == 0
