"""numbagrad.distributions.LKJCholesky and Wishart against torch.distributions: log_prob and
its gradients, moments and entropy, supports and constraints, shapes, expand, reprs and
validation errors; samples by their statistics (LKJ: valid Cholesky factors of correlation
matrices whose correlations have mean 0 and variance 1 / (2 eta + dim - 1); Wishart: the
sample mean against df * Sigma within a tolerance from the Wishart variance)."""

import math
import warnings

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.distributions as ngd

torch = pytest.importorskip("torch")
td = torch.distributions

from test_distributions import _same_error  # noqa: E402 (the comparison of errors, shared)
from test_distributions_families2 import _check  # noqa: E402

RNG = np.random.default_rng(11)


def _corr_cholesky(dim, n, rng):
    """n random Cholesky factors of correlation matrices, in float64."""
    B = rng.normal(size=(n, dim, dim + 2))
    C = B @ B.transpose(0, 2, 1)
    s = np.sqrt(np.diagonal(C, axis1=-2, axis2=-1))
    return np.linalg.cholesky(C / s[:, :, None] / s[:, None, :])


# ---------------------------------------------------------------- LKJCholesky

ETA = np.array([0.3, 1.0, 2.5])


@pytest.mark.parametrize("dim", [2, 3, 5])
def test_lkj_log_prob_values_and_gradients(dim):
    L = _corr_cholesky(dim, 4, RNG)[:, None]  # (4, 1, dim, dim): against a batch of 3
    _check(lambda T, D, c: D.LKJCholesky(dim, c).log_prob(T.tensor(L)), ETA)
    # a scalar concentration, one value
    _check(lambda T, D, c: D.LKJCholesky(dim, c).log_prob(T.tensor(L[0, 0])),
           np.array(1.7))


def test_lkj_log_prob_is_a_density_in_two_dims():
    # dim 2: L = [[1, 0], [r, sqrt(1 - r^2)]], the density over r in (-1, 1) integrates to one
    r = np.linspace(-1, 1, 200001)[1:-1]
    L = np.zeros((len(r), 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1.0, r, np.sqrt(1 - r * r)
    for eta in (0.8, 1.0, 4.0):
        d = ngd.LKJCholesky(2, ng.tensor(eta, dtype=ng.float64))
        dens = d.log_prob(ng.tensor(L)).exp().numpy()
        np.testing.assert_allclose(np.trapezoid(dens, r) if hasattr(np, "trapezoid")
                                   else np.trapz(dens, r), 1.0, rtol=2e-3)


@pytest.mark.parametrize("make", [
    lambda T, D: D.LKJCholesky(3),
    lambda T, D: D.LKJCholesky(2, 0.5),
    lambda T, D: D.LKJCholesky(4, T.tensor([0.5, 2.0])),
    lambda T, D: D.LKJCholesky(3, T.tensor([[1.0], [3.0]], dtype=T.float64)),
], ids=lambda f: "")
def test_lkj_shapes_reprs_supports_flags(make):
    a, b = make(ng, ngd), make(torch, td)
    assert repr(a).replace("numbagrad", "torch") == repr(b)
    assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
    assert repr(a.support) == repr(b.support)
    assert repr(a.arg_constraints) == repr(b.arg_constraints)
    assert (a.has_rsample, a.has_enumerate_support) == (b.has_rsample, b.has_enumerate_support)
    assert a.concentration.dtype.name == str(b.concentration.dtype).split(".")[1]
    for shape in ((), (3,), (4, 2)):
        sa, sb = a.sample(shape), b.sample(shape)
        assert tuple(sa.shape) == tuple(sb.shape)
        assert sa.dtype.name == str(sb.dtype).split(".")[1]
        assert not sa.requires_grad
        assert bool(a.support.check(sa).all())
        # our samples are in torch's support too, and score alike
        np.testing.assert_allclose(a.log_prob(sa).numpy(),
                                   b.log_prob(torch.tensor(sa.numpy())).numpy(),
                                   rtol=1e-5, atol=1e-5)
    e, f = a.expand((4,) + tuple(a.batch_shape)), b.expand((4,) + tuple(b.batch_shape))
    assert type(e) is type(a) and e.batch_shape == f.batch_shape
    assert e.event_shape == f.event_shape
    assert repr(e).replace("numbagrad", "torch") == repr(f)
    assert tuple(e.sample((2,)).shape) == tuple(f.sample((2,)).shape)
    value = f.sample()
    np.testing.assert_allclose(e.log_prob(ng.tensor(value.numpy())).numpy(),
                               f.log_prob(value).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["mean", "mode", "variance", "entropy", "rsample"])
def test_lkj_what_pytorch_leaves_undefined(name):
    for lib, D in ((ng, ngd), (torch, td)):
        d = D.LKJCholesky(3, 2.0)
        with pytest.raises(NotImplementedError):
            attr = getattr(d, name)
            if callable(attr):
                attr()


def test_lkj_support_check():
    L = _corr_cholesky(4, 3, RNG)
    bad = L.copy()
    bad[0, 2, 2] *= 1.01  # a row off the unit sphere
    bad[1] = bad[1].T  # upper triangular
    bad[2, 3] *= -1  # a negative diagonal entry (the row keeps its norm)
    for lib, D in ((ng, ngd), (torch, td)):
        check = D.constraints.corr_cholesky.check if hasattr(D.constraints, "corr_cholesky") \
            else D.LKJCholesky.support.check
        assert check(lib.tensor(L)).tolist() == [True] * 3
        assert check(lib.tensor(bad)).tolist() == [False] * 3


@pytest.mark.parametrize("case", [
    lambda T, D: D.LKJCholesky(1),
    lambda T, D: D.LKJCholesky(0, 1.0),
    lambda T, D: D.LKJCholesky(2, -1.0),
    lambda T, D: D.LKJCholesky(2, T.tensor([1.0, 0.0])),
    lambda T, D: D.LKJCholesky(3).log_prob(T.eye(2)),
    lambda T, D: D.LKJCholesky(3).log_prob(T.ones(3, 3)),
    lambda T, D: D.LKJCholesky(2).log_prob(T.tensor([[1.0, 0.0], [0.6, 0.8]]).mT),
    lambda T, D: D.LKJCholesky(2).log_prob([[1.0, 0.0], [0.6, 0.8]]),
], ids=lambda f: "")
def test_lkj_validation_errors(case):
    _same_error(case)


def test_lkj_invalid_concentration_in_more_dims():
    # PyTorch reports the bad concentration through the Beta laws of its onion method, whose
    # first concentrations differ from ours past the second row (ours: i / 2, see the
    # sample statistics below); the type and the lead of the message agree
    for lib, D in ((ng, ngd), (torch, td)):
        with pytest.raises(ValueError, match="Expected parameter concentration"):
            D.LKJCholesky(4, -1.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lkj_sample_statistics(dtype):
    """Every correlation of an LKJ(eta) matrix in dim d has (r + 1) / 2 ~ Beta(a, a),
    a = eta - 1 + d / 2: mean 0 and variance 1 / (2 eta + d - 1); checked within five
    standard errors, with a fixed seed."""
    ng.manual_seed(0)
    dim, n = 4, 50_000
    eta = np.array([0.5, 1.0, 3.0])
    d = ngd.LKJCholesky(dim, ng.tensor(eta, dtype=getattr(ng, dtype)))
    L = d.sample((n,)).numpy().astype(np.float64)
    assert L.shape == (n, 3, dim, dim)
    assert (np.triu(L, 1) == 0).all()
    assert (np.diagonal(L, axis1=-2, axis2=-1) > 0).all()
    np.testing.assert_allclose(np.linalg.norm(L, axis=-1), 1.0,
                               atol=1e-5 if dtype == "float32" else 1e-12)
    C = L @ L.transpose(0, 1, 3, 2)
    var = 1 / (2 * eta + dim - 1)
    iu = np.tril_indices(dim, -1)
    r = C[..., iu[0], iu[1]]  # (n, 3, 6)
    stderr = np.sqrt(var / n)[:, None]
    assert (np.abs(r.mean(0)) < 5 * stderr).all(), r.mean(0)
    np.testing.assert_allclose(C.mean(0), np.broadcast_to(np.eye(dim), (3, dim, dim)),
                               atol=5 * stderr.max())
    # the variance of r^2's mean: E r^4 - (E r^2)^2, E r^4 = 3 / ((2a + 1)(2a + 3)) for
    # r = 2 Beta(a, a) - 1
    a = eta - 1 + dim / 2
    var_r2 = 3 / ((2 * a + 1) * (2 * a + 3)) - var ** 2
    stderr2 = np.sqrt(var_r2 / n)[:, None]
    assert (np.abs((r ** 2).mean(0) - var[:, None]) < 5 * stderr2).all(), (r ** 2).mean(0)


def test_lkj_samples_follow_the_seed():
    ng.manual_seed(3)
    a = ngd.LKJCholesky(3, ng.tensor([1.0, 2.0])).sample((5,))
    ng.manual_seed(3)
    b = ngd.LKJCholesky(3, ng.tensor([1.0, 2.0])).sample((5,))
    assert a.tolist() == b.tolist()


# ---------------------------------------------------------------- Wishart

P = 3
_B = RNG.normal(size=(2, P, P))
SIGMA = _B @ _B.transpose(0, 2, 1) + 2 * np.eye(P)
DF = np.array([3.5, 6.0])  # (3.5 <= p + 1: the mode is NaN there)
_Z = RNG.normal(size=(4, 1, 7, P)) @ np.linalg.cholesky(SIGMA[0]).T
X = _Z.transpose(0, 1, 3, 2) @ _Z  # (4, 1, P, P): Wishart(7, SIGMA[0]) draws


def _wishart(kind):
    def make(T, D, df, sigma):
        if kind == "covariance_matrix":
            return D.Wishart(df, covariance_matrix=sigma)
        if kind == "precision_matrix":
            return D.Wishart(df, precision_matrix=T.linalg.inv(sigma))
        return D.Wishart(df, scale_tril=T.linalg.cholesky(sigma))
    return make


KINDS = ["covariance_matrix", "precision_matrix", "scale_tril"]


@pytest.mark.parametrize("kind", KINDS)
def test_wishart_log_prob_values_and_gradients(kind):
    make = _wishart(kind)
    _check(lambda T, D, df, s: make(T, D, df, s).log_prob(T.tensor(X)), DF, SIGMA, tol=1e-8)
    _check(lambda T, D, df, s: make(T, D, df, s).log_prob(T.tensor(X[0, 0])), DF, SIGMA,
           tol=1e-8)


@pytest.mark.parametrize("kind", KINDS)
def test_wishart_moments_entropy_and_gradients(kind):
    make = _wishart(kind)
    for name in ("mean", "variance", "mode"):
        _check(lambda T, D, df, s: getattr(make(T, D, df, s), name), DF, SIGMA, tol=1e-10)
    # (PyTorch's digamma differs from ours in the tenth digit)
    _check(lambda T, D, df, s: make(T, D, df, s).entropy(), DF, SIGMA, tol=1e-8)
    for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
        _check(lambda T, D, df, s: getattr(make(T, D, df, s), name), DF, SIGMA, tol=1e-10)


def test_wishart_scalar_df_and_broadcasting():
    _check(lambda T, D, s: D.Wishart(5.0, s).log_prob(T.tensor(X)), SIGMA, tol=1e-8)
    _check(lambda T, D, df: D.Wishart(df, T.tensor(SIGMA[0])).entropy(),
           np.array([[4.0], [9.0]]), tol=1e-8)
    _check(lambda T, D, df: D.Wishart(df, T.tensor(SIGMA)).mean, np.array([[4.0], [9.0]]))


@pytest.mark.parametrize("make", [
    lambda T, D: D.Wishart(T.tensor(4.0), T.eye(3)),
    lambda T, D: D.Wishart(4.0, T.eye(3)),
    lambda T, D: D.Wishart(3, precision_matrix=T.eye(2, dtype=T.float64)),
    lambda T, D: D.Wishart(T.tensor([4.0, 5.0]), scale_tril=T.eye(3)),
    lambda T, D: D.Wishart(T.tensor([[4.0], [5.0]]), T.eye(2).expand(3, 2, 2)),
], ids=lambda f: "")
def test_wishart_shapes_reprs_supports_flags(make):
    a, b = make(ng, ngd), make(torch, td)
    assert repr(a).replace("numbagrad", "torch") == repr(b)
    assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
    assert repr(a.support) == repr(b.support)
    assert repr(a.arg_constraints) == repr(b.arg_constraints)
    assert (a.has_rsample, a.has_enumerate_support) == (b.has_rsample, b.has_enumerate_support)
    assert a.df.dtype.name == str(b.df.dtype).split(".")[1]
    for shape in ((), (3,), (4, 2)):
        sa = a.sample(shape)
        with warnings.catch_warnings():  # (PyTorch warns of a singular sample at every draw)
            warnings.simplefilter("ignore")
            sb = b.sample(shape)
        assert tuple(sa.shape) == tuple(sb.shape)
        assert sa.dtype.name == str(sb.dtype).split(".")[1]
        assert not sa.requires_grad
        assert bool(a.support.check(sa).all())
        assert tuple(a.rsample(shape).shape) == tuple(sb.shape)
    e, f = a.expand((4,) + tuple(a.batch_shape)), b.expand((4,) + tuple(b.batch_shape))
    assert type(e) is type(a) and e.batch_shape == f.batch_shape
    assert repr(e).replace("numbagrad", "torch") == repr(f)
    value = torch.tensor(e.sample().numpy())
    np.testing.assert_allclose(e.log_prob(ng.tensor(value.numpy())).numpy(),
                               f.log_prob(value).numpy(), rtol=1e-4, atol=1e-4)
    for name in ("mean", "variance", "mode"):
        np.testing.assert_allclose(getattr(e, name).numpy(), getattr(f, name).numpy(),
                                   rtol=1e-6)


@pytest.mark.parametrize("case", [
    lambda T, D: D.Wishart(4.0),
    lambda T, D: D.Wishart(4.0, T.eye(3), scale_tril=T.eye(3)),
    lambda T, D: D.Wishart(4.0, T.ones(3)),
    lambda T, D: D.Wishart(4.0, precision_matrix=T.ones(3)),
    lambda T, D: D.Wishart(2.0, T.eye(3)),
    lambda T, D: D.Wishart(2.0, T.eye(3), validate_args=False),
    lambda T, D: D.Wishart(-1.0, T.eye(1)),
    lambda T, D: D.Wishart(T.tensor([2.0, 3.0]), T.eye(3)),
    lambda T, D: D.Wishart(4.0, -T.eye(3)),
    lambda T, D: D.Wishart(4.0, T.tensor([[1.0, 2.0], [0.0, 1.0]])),
    lambda T, D: D.Wishart(4.0, scale_tril=T.ones(3, 3)),
    lambda T, D: D.Wishart(4.0, T.eye(3)).log_prob(T.eye(2)),
    lambda T, D: D.Wishart(4.0, T.eye(3)).log_prob(-T.eye(3)),
    lambda T, D: D.Wishart(4.0, T.eye(2)).log_prob([[1.0, 0.0], [0.0, 1.0]]),
], ids=lambda f: "")
def test_wishart_validation_errors(case):
    _same_error(case)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_wishart_sample_statistics(dtype):
    """The sample mean of each entry against df * Sigma, within five standard errors from
    the Wishart variance df (Sigma_ij^2 + Sigma_ii Sigma_jj); the sample variance against
    that variance too, loosely."""
    ng.manual_seed(0)
    n = 40_000
    df = np.array([3.2, 6.0])
    d = ngd.Wishart(ng.tensor(df, dtype=getattr(ng, dtype)),
                    ng.tensor(SIGMA, dtype=getattr(ng, dtype)))
    s = d.sample((n,)).numpy().astype(np.float64)
    assert s.shape == (n, 2, P, P)
    np.testing.assert_allclose(s, s.transpose(0, 1, 3, 2), rtol=1e-5, atol=1e-5)
    # positive definite, to rounding (a float32 draw with a tiny chi2(df - 2) is nearly singular)
    eig = np.linalg.eigvalsh(s)
    eps = np.finfo(getattr(np, dtype)).eps
    assert (eig[..., 0] > -10 * eps * eig[..., -1]).all()
    mean = df[:, None, None] * SIGMA
    diag = np.diagonal(SIGMA, axis1=-2, axis2=-1)
    var = df[:, None, None] * (SIGMA ** 2 + diag[:, :, None] * diag[:, None, :])
    np.testing.assert_allclose(d.mean.numpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(d.variance.numpy(), var, rtol=1e-5)
    assert (np.abs(s.mean(0) - mean) < 5 * np.sqrt(var / n)).all()
    np.testing.assert_allclose(s.var(0), var, rtol=0.1)


def test_wishart_low_df_warns():
    for lib, D in ((ng, ngd), (torch, td)):
        with pytest.warns(UserWarning, match=r"Low df values detected\. Singular samples "
                          r"are highly likely to occur for ndim - 1 < df < ndim\."):
            D.Wishart(lib.tensor([2.5, 6.0]), lib.eye(3))
    ng.manual_seed(0)
    with pytest.warns(UserWarning, match="Low df"):
        s = ngd.Wishart(ng.tensor([2.5, 6.0]), ng.eye(3)).sample((1000,), max_try_correction=5)
    assert np.isfinite(s.numpy()).all()


def test_wishart_rsample_gradients_flow_to_the_scale():
    ng.manual_seed(1)
    L = ng.tensor(np.linalg.cholesky(SIGMA[0]), requires_grad=True)
    d = ngd.Wishart(ng.tensor(5.0, dtype=ng.float64), scale_tril=L)
    s = d.rsample((3,))
    assert s.requires_grad
    # trace(L A A^T L^T) = ||L A||^2: its gradient with respect to L is 2 L A A^T, summed
    s.diagonal(dim1=-2, dim2=-1).sum().backward()
    assert L.grad is not None and np.isfinite(L.grad.numpy()).all()
    # df with a gradient: numbagrad has no reparameterized chi2, so rsample refuses
    df = ng.tensor(5.0, requires_grad=True)
    with pytest.raises(NotImplementedError):
        ngd.Wishart(df, ng.eye(2)).rsample()
    assert tuple(ngd.Wishart(df, ng.eye(2)).sample((2,)).shape) == (2, 2, 2)


def test_wishart_samples_follow_the_seed():
    ng.manual_seed(3)
    a = ngd.Wishart(ng.tensor([3.0, 4.0]), ng.eye(2)).sample((5,))
    ng.manual_seed(3)
    b = ngd.Wishart(ng.tensor([3.0, 4.0]), ng.eye(2)).sample((5,))
    assert a.tolist() == b.tolist()


def test_registered():
    assert "LKJCholesky" in ngd.__all__ and "Wishart" in ngd.__all__
    assert ngd.LKJCholesky.__name__ == "LKJCholesky" and ngd.Wishart.__name__ == "Wishart"
    assert math.isnan(float(ngd.Wishart(3.0, ng.eye(3)).mode[0, 0]))
