"""Toy data generated in code: nothing is downloaded."""

import zlib

import numpy as np

DOG_SENTENCE = "The dog , which was chasing a squirrel , barked loudly".split()
CAT_CHASES_DOG = "The cat chased the dog".split()
DOG_CHASES_CAT = "The dog chased the cat".split()
SHORT_SENTENCE = "the cat sat on the mat".split()


def rng(seed=0):
    """A numpy Generator with a fixed seed (use one per demo so cells can run in any order)."""
    return np.random.default_rng(seed)


def token_embedding(token, d, scale=1.0):
    """A deterministic embedding for one token: the same word always gets the same vector.

    Seeded by a checksum of the word (Python's hash() changes between runs)."""
    seed = zlib.crc32(token.lower().encode())
    return scale * np.random.default_rng(seed).standard_normal(d)


def embed(tokens, d, scale=1.0):
    """Embeddings of a token list, shape (len(tokens), d)."""
    return np.stack([token_embedding(t, d, scale) for t in tokens])


# --- The video library of lesson 02 --------------------------------------------------------
# Every video is described by how strongly it matches each tag (its key) and carries a small
# "content" vector (its value). A query is a set of tags with weights.
VIDEO_TAGS = ["cats", "dogs", "jumping", "sleeping", "cooking", "music"]
VIDEO_CONTENT = ["cuteness", "energy", "minutes"]

_VIDEOS = [
    # title,                         cats dogs jump sleep cook music | cute energy minutes
    ("Cat leaps onto the fridge", (0.9, 0.0, 0.9, 0.0, 0.1, 0.0), (0.8, 0.9, 1.0)),
    ("Kitten's first jump", (1.0, 0.0, 0.7, 0.1, 0.0, 0.0), (1.0, 0.6, 2.0)),
    ("Cat naps in a sunbeam", (0.9, 0.0, 0.0, 1.0, 0.0, 0.1), (0.9, 0.1, 9.0)),
    ("Dog catches a frisbee", (0.0, 1.0, 0.8, 0.0, 0.0, 0.0), (0.7, 1.0, 1.5)),
    ("Puppy falls asleep mid-bark", (0.0, 0.9, 0.0, 0.9, 0.0, 0.0), (1.0, 0.2, 3.0)),
    ("Cat and dog share a bed", (0.7, 0.7, 0.0, 0.8, 0.0, 0.0), (1.0, 0.1, 4.0)),
    ("Ten-minute pasta", (0.0, 0.0, 0.0, 0.0, 1.0, 0.1), (0.1, 0.4, 10.0)),
    ("Jazz for cooking", (0.0, 0.0, 0.0, 0.0, 0.7, 1.0), (0.1, 0.3, 60.0)),
    ("Jump rope workout", (0.0, 0.0, 1.0, 0.0, 0.0, 0.6), (0.0, 1.0, 20.0)),
    ("Lullabies that put cats to sleep", (0.6, 0.0, 0.0, 0.7, 0.0, 0.9), (0.6, 0.0, 30.0)),
    ("Top 100 viral moments", (0.88, 0.88, 0.88, 0.88, 0.88, 0.88), (0.5, 0.8, 45.0)),  # tagged with everything
]


def video_library():
    """(titles, keys, values): 11 titles, keys (11, 6) over VIDEO_TAGS, values (11, 3) over VIDEO_CONTENT."""
    titles = [v[0] for v in _VIDEOS]
    keys = np.array([v[1] for v in _VIDEOS], dtype=float)
    values = np.array([v[2] for v in _VIDEOS], dtype=float)
    return titles, keys, values


def video_query(text):
    """A query vector over VIDEO_TAGS from words such as "cats jumping" (unknown words are ignored)."""
    words = text.lower().split()
    return np.array([1.0 if tag in words else 0.0 for tag in VIDEO_TAGS])
