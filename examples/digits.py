"""Generated images of digits for the examples: a 5x7 font's glyphs, scaled 2x, placed at a
random spot of a 16x16 image, with a random stroke weight, brightness and noise (NumPy only,
so the same images feed numbagrad and PyTorch)."""

import numpy as np

FONT = {  # 5x7 glyphs, one string of 7 rows of 5 pixels per digit
    0: "01110100011001110101110011000101110", 1: "00100011000010000100001000010001110",
    2: "01110100010000100010001000100011111", 3: "11111000100010000010000011000101110",
    4: "00010001100101010010111110001000010", 5: "11111100001111000001000011000101110",
    6: "00110010001000011110100011000101110", 7: "11111000010001000100010000100001000",
    8: "01110100011000101110100011000101110", 9: "01110100011000101111000010001001100",
}
SIZE = 16


def draw(digit: int, rng: np.random.Generator) -> np.ndarray:
    """One 16x16 image of ``digit``: its glyph scaled 2x, at a random place, with a random
    stroke weight, brightness and noise."""
    glyph = np.array([int(c) for c in FONT[digit]], np.float32).reshape(7, 5)
    glyph = np.kron(glyph, np.ones((2, 2), np.float32))  # 14 x 10
    if rng.random() < 0.5:  # a bolder stroke
        glyph = np.maximum(glyph, np.roll(glyph, 1, axis=1))
    image = np.zeros((SIZE, SIZE), np.float32)
    top, left = rng.integers(0, SIZE - 14 + 1), rng.integers(0, SIZE - 10 + 1)
    image[top:top + 14, left:left + 10] = glyph * rng.uniform(0.6, 1.0)
    image += rng.normal(0, 0.25, image.shape).astype(np.float32)
    return image


def images(n: int, seed: int) -> tuple:
    """``n`` images (n, 1, 16, 16) float32 and their labels (balanced classes), by ``seed``."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 10
    return np.stack([draw(int(d), rng) for d in labels])[:, None], labels
