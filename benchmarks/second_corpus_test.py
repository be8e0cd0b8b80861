"""Held-out questions for benchmarks/second_corpus.py: written before any method ran on them."""

TEST_QUESTIONS: list[tuple[str, str, list[str | list[str]]]] = [
    (
        "py-21",
        "How do I loop over a Python list and get each item's position along with the item?",
        ["enumerate"],
    ),
    (
        "py-22",
        "How do I remove duplicates from a Python list while keeping the items in their "
        "original order?",
        ["fromkeys"],
    ),
    (
        "py-23",
        "How do I split a Python string into the part before the first '=' and the part "
        "after it, even when the part after it contains '=' too?",
        [["partition", "maxsplit", "split('=', 1)"]],
    ),
    (
        "py-24",
        "How do I replace several single characters in a Python string in one pass, for "
        "example every 'a' with '1' and every 'b' with '2'?",
        [["translate", "maketrans"]],
    ),
    (
        "py-25",
        "How do I generate every possible ordering of the items in a Python list?",
        ["permutations"],
    ),
    (
        "py-26",
        "How do I pair every item of one Python list with every item of another list "
        "without writing nested loops?",
        ["product"],
    ),
    (
        "py-27",
        "How do I flatten a list of lists into a single list in Python using the standard library?",
        ["chain"],
    ),
    (
        "py-28",
        "How do I take just the first 10 items from a Python generator without turning the "
        "whole thing into a list?",
        ["islice"],
    ),
    (
        "py-29",
        "How do I combine several already sorted Python lists into one sorted sequence "
        "lazily, without concatenating them and sorting again?",
        [["merge(", "heapq.merge"]],
    ),
    (
        "py-30",
        "How do I keep only the last 100 items I have seen in Python, so that the oldest "
        "one is dropped automatically when a new one is added?",
        ["deque", "maxlen"],
    ),
    (
        "py-31",
        "How do I group a list of words into lists by their first letter in a Python "
        "dictionary without checking whether each key exists first?",
        [["defaultdict", "setdefault"]],
    ),
    (
        "py-32",
        "How do I make a new version of a Python function with some of its arguments "
        "already filled in?",
        ["partial"],
    ),
    (
        "py-33",
        "How do I sort a Python list with an old-style comparison function that returns "
        "-1, 0 or 1?",
        ["cmp_to_key"],
    ),
    (
        "py-34",
        "How do I find the smallest number that both 12 and 18 divide evenly in Python?",
        [["lcm", "gcd"]],
    ),
    (
        "py-35",
        "How do I compute how many different ways there are to pick 5 cards out of a deck "
        "of 52 in Python?",
        [["comb(", "factorial"]],
    ),
    (
        "py-36",
        "How do I find the middle value of a list of numbers in Python, averaging the two "
        "middle ones when the count is even?",
        ["median"],
    ),
]
