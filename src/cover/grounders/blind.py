"""A text-only ("blind") grounder that trains and runs on CPU in seconds.

In the spirit of Otani et al. 2020 ("Uncovering hidden challenges in query-based video
moment retrieval"): the query's words alone, never the video, predict where the moment
lies, which shows how much of a benchmark is solvable from dataset priors. Features
are the TF-IDF of the query (word 1- and 2-grams in at least ``min_df`` queries, the
``max_features`` most frequent, ties broken by the term; sublinear tf, L2-normalised);
one ridge regression (scikit-learn) maps them to the normalised envelope
``(s*/T, e*/T)`` and to the share of each of ``bins`` equal parts of the video the
truth covers. Prediction:
``[s, e] = T · clip([ŝ, ê], 0, 1)`` (ordered) and, per clip of ``clip`` seconds, the
covered share interpolated at the clip's centre: a relevance signal, so SLS runs too.

``prior_only=True`` drops the words: every query gets the training set's mean
normalised start/end (the length-prior baseline). The fitted model is JSON (vocabulary,
idf, coefficients), never pickle; predicting needs numpy and scipy only.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from cover._version import __version__
from cover.data.relevance import require_signal_clips
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError
from cover.io.output import write_json
from cover.ragged import Ragged, offsets_from_lengths, row_ids

SCHEMA = "cover.blind_grounder"
SCHEMA_VERSION = 1
#: scikit-learn's default token pattern: words of two or more word characters.
TOKEN = re.compile(r"(?u)\b\w\w+\b")
INTERCEPT_SCALE = 100.0


def ngrams(text: str, n: int) -> list[str]:
    """Lower-cased word 1..n-grams, in scikit-learn's ``TfidfVectorizer`` order."""
    tokens = TOKEN.findall(text.lower())
    out = list(tokens)
    for k in range(2, n + 1):
        out += [" ".join(tokens[i:i + k]) for i in range(len(tokens) - k + 1)]
    return out


def tfidf(texts: list[str], vocabulary: dict[str, int], idf: NDArray[np.float64],
          n: int) -> sparse.csr_matrix:
    """``x_t = (1 + ln tf_t) · idf_t``, then ``x / ||x||_2`` per row (terms outside
    ``vocabulary`` ignored): the transform scikit-learn fitted, without scikit-learn."""
    rows, cols = [], []
    for i, text in enumerate(texts):
        for g in ngrams(text, n):
            j = vocabulary.get(g)
            if j is not None:
                rows.append(i)
                cols.append(j)
    counts = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)),
                               shape=(len(texts), idf.size))
    counts.sum_duplicates()
    counts.data = (1.0 + np.log(counts.data)) * idf[counts.indices]
    norm = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).ravel())
    return sparse.csr_matrix(sparse.diags(1.0 / np.where(norm > 0, norm, 1.0)) @ counts)


def targets(table: GroundingTable, bins: int) -> NDArray[np.float64]:
    """Per row ``[s*/T, e*/T, cover_1, ..., cover_bins]``: the normalised truth envelope
    and the share of each bin ``[b/bins, (b+1)/bins]`` it covers."""
    s, e = table.truth_envelope()
    t = table.duration
    sn, en = np.clip(s / t, 0.0, 1.0), np.clip(e / t, 0.0, 1.0)
    lo = np.arange(bins) / bins
    share = np.clip(np.minimum(en[:, None], lo + 1 / bins) - np.maximum(sn[:, None], lo),
                    0.0, None) * bins
    return np.column_stack([sn, en, share])


@dataclass
class BlindGrounder:
    """Ridge regression from query TF-IDF to normalised boundaries and bin relevance.

    Parameters: ``alpha`` ridge penalty; ``bins`` relevance bins over the video;
    ``ngram`` longest word n-gram; ``min_df`` / ``max_features`` vocabulary limits;
    ``prior_only`` the length-prior baseline (no words). Fitted state ends with ``_``.
    """

    alpha: float = 1.0
    bins: int = 20
    ngram: int = 2
    min_df: int = 2
    max_features: int = 2000
    prior_only: bool = False
    vocabulary_: list[str] = field(default_factory=list, init=False)
    idf_: NDArray[np.float64] = field(default_factory=lambda: np.empty(0), init=False)
    coef_: NDArray[np.float64] = field(default_factory=lambda: np.empty((0, 0)), init=False)
    intercept_: NDArray[np.float64] = field(default_factory=lambda: np.empty(0), init=False)
    n_train_: int = field(default=0, init=False)

    def fit(self, table: GroundingTable) -> Self:
        """Fit on a labelled table with query text (e.g. a Lighthouse train file)."""
        if table.query is None or any(q is None for q in table.query):
            raise InputError(f"{table.source}: every training row needs its query text")
        if len(table) == 0:
            raise InputError(f"{table.source}: no training rows")
        y = targets(table, self.bins)
        texts = [str(q) for q in table.query]
        self.n_train_ = len(table)
        if self.prior_only:
            self.vocabulary_, self.idf_ = [], np.empty(0)
            self.coef_, self.intercept_ = np.zeros((y.shape[1], 0)), y.mean(axis=0)
            return self
        try:
            from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
            from sklearn.linear_model import Ridge
        except ImportError:
            raise ImportError("training the blind grounder needs scikit-learn: "
                              "pip install 'cover-grounding[grounder]'") from None
        counts = CountVectorizer(ngram_range=(1, self.ngram),
                                 min_df=min(self.min_df, len(texts)))
        xc = counts.fit_transform(texts)  # the texts tokenised once
        # The max_features most frequent terms, ties broken by the term (columns are in
        # term order, the sort is stable): scikit-learn's own cut sorts unstably, and its
        # ties then fall by the CPU's sort kernel, so the model would differ by machine.
        keep = np.sort(np.argsort(-np.asarray(xc.sum(axis=0)).ravel(),
                                  kind="stable")[:self.max_features])
        tf = TfidfTransformer(sublinear_tf=True)
        x = tf.fit_transform(xc[:, keep])
        self.vocabulary_ = counts.get_feature_names_out()[keep].tolist()
        self.idf_ = np.asarray(tf.idf_, dtype=np.float64)
        # The intercept is a constant feature of value INTERCEPT_SCALE (its penalty is
        # alpha / INTERCEPT_SCALE**2, negligible), so the exact Cholesky solver runs on
        # the sparse features: seconds, where the iterative sparse solvers take ten times
        # longer for the same coefficients.
        xa = sparse.hstack([x, np.full((x.shape[0], 1), INTERCEPT_SCALE)], format="csr")
        model = Ridge(alpha=self.alpha, solver="cholesky", fit_intercept=False).fit(xa, y)
        coef = np.asarray(model.coef_, dtype=np.float64)
        self.coef_ = coef[:, :-1]
        self.intercept_ = coef[:, -1] * INTERCEPT_SCALE
        return self

    def _require_fitted(self) -> None:
        if self.n_train_ == 0:
            raise RuntimeError("this BlindGrounder is not fitted: call fit(table) or load(path)")

    def predict_normalised(self, queries: list[str]) -> NDArray[np.float64]:
        """``[ŝ, ê, cover_1..cover_bins]`` per query, in units of the video length."""
        self._require_fitted()
        if not self.vocabulary_:
            return np.tile(self.intercept_, (len(queries), 1))
        x = tfidf(queries, {t: i for i, t in enumerate(self.vocabulary_)}, self.idf_,
                  self.ngram)
        return np.asarray(x @ self.coef_.T) + self.intercept_

    def predict(self, table: GroundingTable, *, clip: float = DEFAULT_CLIP_SECONDS
                ) -> GroundingTable:
        """``table`` (query text and duration needed) with the predicted interval and a
        relevance value per ``clip``-second clip (``ceil(T / clip)`` clips)."""
        if table.query is None or any(q is None for q in table.query):
            raise InputError(f"{table.source}: every row needs its query text")
        if not np.all(np.isfinite(table.duration) & (table.duration > 0)):
            raise InputError(f"{table.source}: every row needs a duration > 0")
        y = self.predict_normalised([str(q) for q in table.query])
        t = table.duration
        a, b = np.clip(y[:, 0], 0.0, 1.0), np.clip(y[:, 1], 0.0, 1.0)
        s, e = np.minimum(a, b) * t, np.maximum(a, b) * t
        n_clips = np.ceil(t / clip - 1e-9)
        require_signal_clips(table, np.arange(len(table)), n_clips, "a relevance signal",
                             clip)
        n_clips = n_clips.astype(np.int64)
        off = offsets_from_lengths(n_clips)
        r = row_ids(off)
        centre = (np.arange(off[-1]) - off[r] + 0.5) * clip
        x = np.minimum(centre / t[r], 1.0) * self.bins - 0.5
        i0 = np.clip(np.floor(x), 0, self.bins - 1).astype(np.int64)
        i1 = np.minimum(i0 + 1, self.bins - 1)
        w = np.clip(x - i0, 0.0, 1.0)
        binv = y[:, 2:]
        rel = binv[r, i0] * (1 - w) + binv[r, i1] * w
        return replace(table, pred_start=s, pred_end=e, relevance=Ragged(rel, off),
                       clip=float(clip), truth=table.truth)

    # ---- persistence --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        self._require_fitted()
        return {
            "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
            "created_by": f"cover {__version__}",
            "params": {"alpha": self.alpha, "bins": self.bins, "ngram": self.ngram,
                       "min_df": self.min_df, "max_features": self.max_features,
                       "prior_only": self.prior_only},
            "n_train": self.n_train_,
            "outputs": ["start_frac", "end_frac"] + [f"bin_{b}" for b in range(self.bins)],
            "vocabulary": self.vocabulary_,
            "idf": self.idf_.tolist(),
            "coef": self.coef_.tolist(),
            "intercept": self.intercept_.tolist(),
        }

    def save(self, path: str | Path, *, inputs: list[str | Path] | None = None) -> None:
        """Write the model as JSON (atomically)."""
        write_json(path, self.to_dict(), inputs=inputs or (), indent=None)

    @classmethod
    def from_dict(cls, doc: Any, *, source: str = "<dict>") -> BlindGrounder:
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise InputError(f"{source}: not a COVER blind-grounder model")
        if doc.get("schema_version") != SCHEMA_VERSION:
            raise InputError(f"{source}: model schema version "
                                      f"{doc.get('schema_version')!r}, this COVER reads "
                                      f"{SCHEMA_VERSION}; retrain with `cover grounder train`")
        try:
            m = cls(**doc["params"])
            m.vocabulary_ = [str(t) for t in doc["vocabulary"]]
            m.idf_ = np.asarray(doc["idf"], dtype=np.float64).reshape(-1)
            m.coef_ = np.asarray(doc["coef"], dtype=np.float64).reshape(m.bins + 2, -1)
            m.intercept_ = np.asarray(doc["intercept"], dtype=np.float64).reshape(-1)
            m.n_train_ = int(doc["n_train"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{source}: malformed model field ({exc})") from None
        if not (len(m.vocabulary_) == m.idf_.size == m.coef_.shape[1]
                and m.intercept_.size == m.bins + 2 and m.n_train_ > 0
                and all(math.isfinite(v) for v in m.intercept_)):
            raise InputError(f"{source}: inconsistent model (vocabulary, idf and "
                                      "coefficient sizes disagree)")
        return m

    @classmethod
    def load(cls, path: str | Path) -> BlindGrounder:
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"{path}: no such model file") from None
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read model file ({exc})") from None
        return cls.from_dict(doc, source=str(path))


def prediction_rows(table: GroundingTable) -> list[dict[str, Any]]:
    """Moment-DETR-style rows of a predicted table (one window, per-clip saliency)."""
    recs = table.records
    out = []
    for i in range(len(table)):
        src = recs[i] if recs is not None and isinstance(recs[i], dict) else {}
        row: dict[str, Any] = {"qid": src.get("qid", str(table.qid[i])),
                               "vid": str(table.vid[i])}
        if table.query is not None and table.query[i] is not None:
            row["query"] = str(table.query[i])
        row["duration"] = float(table.duration[i])
        row["pred_relevant_windows"] = [[float(table.pred_start[i]),
                                         float(table.pred_end[i]), 1.0]]
        row["pred_saliency_scores"] = table.relevance.row(i).tolist()
        out.append(row)
    return out
