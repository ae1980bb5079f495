#!/usr/bin/python3
"""Goldens for Faithlab's localisation and axiomatic metrics.

Re-states, in numpy alone and in this file's own words, the per-input
definitions of Quantus 0.6's localisation metrics (PointingGame,
AttributionLocalisation, TopKIntersection, RelevanceMassAccuracy,
RelevanceRankAccuracy, AUC, Focus) and axiomatic metrics (Completeness,
NonSensitivity, the map comparison of InputInvariance), as read in the
Quantus sources (localisation files at commit 089c62b where the index held
them, else the newest stored: pointing_game 11a4145, top_k_intersection
8a78e37, focus 6abba6b; completeness 11f06e5; non_sensitivity 089c62b;
normalise_func 0de6af9). Quantus is not imported (it cannot be installed
here) and none of its code is copied.

Where Faithlab parts from Quantus on purpose (Completeness's tolerance,
InputInvariance's shift-absorbing model, Focus's quadrant names), the
functions here compute Faithlab's stated version, which reduces to
Quantus's where the doc comments say.

Writes goldens.json beside this file: inputs and expected per-input scores.
Usage: /usr/bin/python3 reference.py
"""
import json
import os

import numpy as np

rng = np.random.default_rng(50)


# --- map preparation (Quantus: normalise first, then abs) -----------------

def norm_max(a):
    if np.all(a == 0):
        return a
    return a / np.max(np.abs(a))


def norm_negative(a):
    if np.all(a == 0):
        return a
    hi, lo = a.max(), a.min()
    if lo >= 0:
        return a / hi
    if hi <= 0:
        return -a / lo
    out = np.zeros_like(a)
    out[a > 0] = a[a > 0] / hi
    out[a < 0] = -a[a < 0] / lo
    return out


def prepare(a, normalise, magnitude):
    a = np.asarray(a, dtype=np.float64)
    if normalise == "max":
        a = norm_max(a)
    elif normalise == "negative":
        a = norm_negative(a)
    if magnitude:
        a = np.abs(a)
    return a


# --- localisation ------------------------------------------------------------

def pointing_game(a, s, weighted=False):
    s = s.astype(bool)
    if s.sum() == 0:
        return float("nan")
    hit = bool(np.any(s[a == a.max()]))
    if weighted and hit:
        return 1 - s.sum() / s.size
    return float(hit)


def attribution_localisation(a, s, weighted=False):
    s = s.astype(bool)
    if s.sum() == 0:
        return float("nan")
    r = a[s].sum() / (a.sum() + 1e-9)
    if r > 1:
        return float("nan")
    if weighted:
        r *= s.sum() / s.size
    return float(r)


def top_k_intersection(a, s, k, concept=False):
    s = s.astype(bool)
    if s.sum() == 0:
        return float("nan")
    top = np.argsort(a, kind="stable")[-k:]
    t = np.isin(np.arange(a.size), top)
    v = np.logical_and(s, t).sum() / k
    if concept:
        v *= s.size / s.sum()
    return float(v)


def relevance_mass_accuracy(a, s):
    s = s.astype(bool)
    if s.sum() == 0:
        return float("nan")
    return float((a * s).sum() / a.sum())


def relevance_rank_accuracy(a, s):
    s = s.astype(bool)
    k = int(s.sum())
    if k == 0:
        return float("nan")
    top = np.argsort(-a, kind="stable")[:k]
    return float(s[top].sum() / k)


def roc_auc(a, s):
    """Area under the ROC curve drawn through every distinct threshold,
    highest first, by the trapezoidal rule (what roc_curve and auc give)."""
    s = s.astype(bool)
    pos, neg = s.sum(), (~s).sum()
    if pos == 0 or neg == 0:
        return float("nan")
    order = np.argsort(-a, kind="stable")
    a_sorted, s_sorted = a[order], s[order]
    tps, fps = np.cumsum(s_sorted), np.cumsum(~s_sorted)
    last = np.r_[np.diff(a_sorted) != 0, True]  # end of each run of ties
    tpr = np.r_[0, tps[last] / pos]
    fpr = np.r_[0, fps[last] / neg]
    return float(np.trapz(tpr, fpr))


def focus_quantus_order(a, h, w, p):
    """Quantus's slices, in its tuple order: [:h2, :w2], [h2:, :w2],
    [:h2, w2:], [h2:, w2:] with h2 = h // 2 on axis 1 (rows)."""
    h2, w2 = h // 2, w // 2
    quads = [a[:h2, :w2], a[h2:, :w2], a[:h2, w2:], a[h2:, w2:]]
    total = a[a > 0].sum()
    on = sum(q[q > 0].sum() for q, t in zip(quads, p) if t)
    if total == 0:
        return float("nan")
    return float(on / total)


def nan_none(v):
    return None if isinstance(v, float) and np.isnan(v) else v


def localisation_cases():
    cases = []
    h = w = 8
    for i in range(12):
        a = rng.normal(size=(h, w))
        if i % 3 == 0:
            a = np.abs(a)  # a map of one sign
        s = np.zeros((h, w))
        r0, c0 = rng.integers(0, 4, size=2)
        rh, cw = rng.integers(2, 5, size=2)
        s[r0:r0 + rh, c0:c0 + cw] = 1
        if i % 2 == 1:
            a += 1.5 * s  # a map that finds the evidence, mostly
        if i == 10:
            s[:] = 0  # empty mask: no score
        if i == 11:
            s[:] = 1  # every pixel: no AUC
        cases.append((a, s))
    # a map with ties at the top: every tied pixel counts in the pointing game
    a = np.zeros((h, w))
    a[0, 0] = a[7, 7] = 2
    a[3, 3] = -1
    s = np.zeros((h, w))
    s[7, 7] = 1
    cases.append((a, s))
    out = []
    for a, s in cases:
        af, sf = a.flatten(), s.flatten()
        pg = prepare(af, "negative", False)
        al = prepare(af, "max", True)
        mx = prepare(af, "max", False)
        out.append({
            "h": h, "w": w, "map": af.tolist(), "mask": sf.tolist(),
            "pointing_game": nan_none(pointing_game(pg, sf)),
            "pointing_game_weighted": nan_none(pointing_game(pg, sf, True)),
            "attribution_localisation": nan_none(attribution_localisation(al, sf)),
            "attribution_localisation_weighted": nan_none(attribution_localisation(al, sf, True)),
            "top_k_intersection_5": nan_none(top_k_intersection(mx, sf, 5)),
            "top_k_intersection_5_concept": nan_none(top_k_intersection(mx, sf, 5, True)),
            "relevance_mass_accuracy": nan_none(relevance_mass_accuracy(mx, sf)),
            "relevance_rank_accuracy": nan_none(relevance_rank_accuracy(mx, sf)),
            "auc": nan_none(roc_auc(mx, sf)),
        })
    return out


def focus_cases():
    out = []
    h = w = 8
    for i in range(8):
        a = rng.normal(size=(h, w))
        p = [0, 0, 0, 0]
        for q in rng.choice(4, size=2, replace=False):
            p[q] = 1
        out.append({"h": h, "w": w, "map": a.flatten().tolist(), "quantus_p": p,
                    "focus": nan_none(focus_quantus_order(prepare(a, "max", False), h, w, p))})
    return out


# --- axiomatic ----------------------------------------------------------------

def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def completeness_cases():
    d, k = 16, 3
    W = rng.normal(size=(k, d)).astype(np.float32)
    b = rng.normal(size=k).astype(np.float32) * 0.5
    xs, maps, expected = [], [], []
    for i in range(6):
        x = rng.uniform(0, 1, size=d).astype(np.float32)
        if i % 2 == 0:
            x[rng.integers(d)] = 0  # black baseline = zero here
        logits = W.astype(np.float64) @ x + b
        c = int(np.argmax(logits))
        base = np.full(d, x.min(), dtype=np.float64)
        delta = float(logits[c] - (W.astype(np.float64) @ base + b)[c])
        if i < 3:
            m = W[c] * (x - x.min())  # Gradient x (input - baseline): complete
        elif i == 3:
            m = W[c] * x  # Gradient x Input: complete only where min is 0
        else:
            m = rng.normal(size=d)  # a random map
        total = float(np.sum(np.asarray(m, dtype=np.float32).astype(np.float64)))
        gap = abs(total - delta)
        xs.append(x.tolist())
        maps.append(np.asarray(m, dtype=np.float32).tolist())
        expected.append({"complete": 1.0 if gap <= 1e-3 * abs(delta) else 0.0, "gap": gap / abs(delta)})
    return {"d": d, "classes": k, "weight": W.flatten().tolist(), "bias": b.tolist(),
            "x": xs, "maps": maps, "expected": expected}


def non_sensitivity_cases():
    d, k = 16, 3
    W = rng.normal(size=(k, d)).astype(np.float32)
    W[W > 0] += 0.5
    W[W <= 0] -= 0.5
    ignored = [1, 4, 5, 9, 14]
    W[:, ignored] = 0  # the model does not look at these pixels
    b = np.zeros(k, dtype=np.float32)
    xs, maps, expected = [], [], []
    for i in range(5):
        x = rng.uniform(0.05, 1, size=d).astype(np.float32)
        x[rng.integers(d)] = 0  # one pixel already at the baseline
        x64 = x.astype(np.float64)
        c = int(np.argmax(W.astype(np.float64) @ x64 + b))
        if i == 0:
            m = W[c] * x  # Gradient x Input: zero where ignored (and at the 0 pixel)
        elif i == 1:
            m = W[c].copy()  # Gradient: zero where ignored
        elif i == 2:
            m = rng.normal(size=d)  # a random map
        elif i == 3:
            m = np.zeros(d)  # a blank map: everything unattributed
        else:
            m = np.ones(d)  # a constant map: everything attributed
        m = np.asarray(m, dtype=np.float32)
        a = prepare(m.astype(np.float64), "max", True)
        unattributed = a < 1e-5
        p0 = softmax(W.astype(np.float64) @ x64 + b)[c]
        insensitive = np.zeros(d, dtype=bool)
        for j in range(d):
            xp = x64.copy()
            xp[j] = x64.min()
            insensitive[j] = abs(p0 - softmax(W.astype(np.float64) @ xp + b)[c]) < 1e-5
        xs.append(x.tolist())
        maps.append(m.tolist())
        expected.append(int(np.sum(unattributed ^ insensitive)))
    return {"d": d, "classes": k, "weight": W.flatten().tolist(), "bias": b.tolist(),
            "x": xs, "maps": maps, "expected": expected}


def invariance_cases():
    out = []
    for i in range(6):
        a = rng.normal(size=10)
        if i == 0:
            b = a.copy()
        elif i == 1:
            b = a + 1e-6 * np.max(np.abs(a)) * rng.normal(size=10)  # float noise
        else:
            b = a + rng.normal(size=10) * 0.1 * i
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        top = np.max(np.abs(a32.astype(np.float64)))
        diff = np.max(np.abs(b32.astype(np.float64) - a32.astype(np.float64)))
        out.append({"a": a32.tolist(), "b": b32.tolist(),
                    "same": 1.0 if diff <= 1e-4 * top else 0.0, "error": diff / top})
    return out


golden = {
    "localisation": localisation_cases(),
    "focus": focus_cases(),
    "completeness": completeness_cases(),
    "non_sensitivity": non_sensitivity_cases(),
    "input_invariance": invariance_cases(),
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens.json"), "w") as f:
    json.dump(golden, f)
    f.write("\n")
