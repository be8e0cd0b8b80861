"""Fresh held-out questions for benchmarks/second_corpus.py (`--test2`): written before any
method ran on them, after the name check of draft auto was mended (297a1bb)."""

TEST2_QUESTIONS: list[tuple[str, str, list[str | list[str]]]] = [
    (
        "py-37",
        "How do I break a block of text into a list of lines in Python, whatever line endings "
        "it uses (\\n, \\r\\n or \\r)?",
        ["splitlines"],
    ),
    (
        "py-38",
        "How do I get every possible pair of items from a Python list, where the order inside "
        "a pair does not matter and no item is paired with itself, without writing nested loops?",
        ["combinations"],
    ),
    (
        "py-39",
        "How do I get the three cut points that divide a list of numbers into quartiles "
        "(four groups of equal size) in Python?",
        ["quantiles"],
    ),
    (
        "py-40",
        "How do I find the closest simple fraction to 3.14159 in Python whose denominator is "
        "no larger than 1000?",
        ["limit_denominator"],
    ),
    (
        "py-41",
        "How do I look up a setting in several Python dictionaries in order (command-line "
        "options first, then environment, then defaults) without merging them into a new "
        "dictionary?",
        ["ChainMap"],
    ),
    (
        "py-42",
        "How do I get all six comparison operators for my Python class when I only define "
        "equality and less-than myself?",
        ["total_ordering"],
    ),
    (
        "py-43",
        "How do I write a Python function that runs a different implementation depending on "
        "the type of its first argument, with each implementation registered separately?",
        ["singledispatch"],
    ),
    (
        "py-44",
        "How do I fill in $name style placeholders in a Python string, leaving any placeholder "
        "I have no value for as it is instead of raising an error?",
        ["safe_substitute"],
    ),
    (
        "py-45",
        "How do I check in Python that a regular expression matches a whole string, not just "
        "its beginning?",
        [["fullmatch", "\\Z"]],
    ),
    (
        "py-46",
        "How do I compute in Python the probability that a normally distributed value with "
        "mean 100 and standard deviation 15 is below 130, using only the standard library?",
        [["NormalDist", "erf("]],
    ),
    (
        "py-47",
        "How do I turn a hexadecimal string such as 'deadbeef' into the corresponding bytes "
        "object in Python?",
        [["fromhex", "unhexlify", "a2b_hex"]],
    ),
    (
        "py-48",
        "How do I replace the tab characters in a Python string with spaces so that the "
        "columns line up at every 4th position?",
        ["expandtabs"],
    ),
]
