# ---
# description: "Without a non-linearity, stacked Dense layers collapse into one affine map (XOR proves it); sigmoid gradients vanish for large inputs."
# tags: [easy, keras, numerics]
# ---

# %% [markdown]
# # Why do neural networks need activation functions, and which one do you pick?
#
# A notebook page: the chart below was drawn by the test run that verified this page.
#
# <h2 id="quick-answer">Quick answer</h2>
#
# Without a non-linear activation, any stack of `Dense` layers collapses into **one** affine map, so depth
# adds nothing: such a network cannot even fit XOR (its best mean squared error is 0.25, the same as
# always predicting 0.5). One non-linear hidden layer (ReLU, tanh, ...) is enough to fit XOR exactly.
# The choice matters for gradients too: the sigmoid's derivative is at most 0.25 and shrinks to about
# 4.5e-5 at an input of 10, so saturated or deep sigmoid stacks barely learn; ReLU-family activations pass
# a gradient of 1 for positive inputs and are the default for hidden layers. At the output, the activation
# follows the task: a sigmoid for one probability in (0, 1), a softmax for class probabilities that sum to 1.
# An activation is part of the model's forward pass: it is neither the loss (which scores the output) nor
# the optimiser (which updates the weights).
#
# <h2 id="detailed-answer">Detailed answer</h2>
#
# - **Why non-linearity**: `W2 @ (W1 @ x + b1) + b2 = (W2 @ W1) @ x + (W2 @ b1 + b2)`. A composition of
#   linear layers is linear, so it can only draw one straight decision boundary. XOR's positive points
#   (0,1), (1,0) are not separable from (0,0), (1,1) by a line.
# - **Sigmoid** `1 / (1 + e^-x)`: output in (0, 1), derivative `s(1 - s)` ≤ 0.25. Through *n* sigmoid layers
#   the backpropagated gradient is multiplied by at most 0.25 per layer: the *vanishing gradient*. Still the
#   right choice for a binary-probability **output** (better: output logits and use `from_logits=True`).
# - **tanh**: zero-centred, derivative ≤ 1 at 0, but it saturates like the sigmoid.
# - **ReLU** `max(0, x)`: derivative 1 for x > 0, 0 for x < 0: no saturation on the positive side, cheap,
#   but a unit whose input is always negative gets no gradient ("dying ReLU"). **Leaky ReLU**, **GELU** and
#   **SiLU/swish** keep a small gradient for negative inputs.
# - **Softmax** `exp(z_i) / Σ exp(z_j)` turns the last layer's logits into class probabilities: each in
#   [0, 1], summing to 1 over the classes, unchanged when the same constant is added to every logit. Keras
#   hands the computation to `tf.nn.softmax`
#   ([keras/src/backend/tensorflow/nn.py](https://github.com/keras-team/keras/blob/v3.15.1/keras/src/backend/tensorflow/nn.py)),
#   whose kernel subtracts each row's maximum before `exp`
#   ([softmax_op_functor.h](https://github.com/tensorflow/tensorflow/blob/v2.21.0/tensorflow/core/kernels/softmax_op_functor.h)),
#   so huge logits do not overflow (asserted below). Like the sigmoid, prefer passing logits to the loss.
#
# The official list: [Keras layer activations](https://keras.io/api/layers/activations/). How the
# gradients below are computed: [How does `tf.GradientTape` work?](../gradient-tape/#quick-answer).
#
# <h2 id="proof">Proof</h2>
#
# **1. A linear-only network cannot fit XOR.** First the best any affine map can do, by exact least squares,
# then a three-layer network without activations, trained: it ends at the same 0.25.

# %%
import keras
import numpy as np
import tensorflow as tf

X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], "float32")
Y = np.array([[0], [1], [1], [0]], "float32")

# Best affine fit (least squares with a bias column): every prediction is 0.5, MSE 0.25.
A = np.hstack([X, np.ones((4, 1), "float32")])
coef, *_ = np.linalg.lstsq(A, Y, rcond=None)
np.testing.assert_allclose(A @ coef, np.full((4, 1), 0.5), atol=1e-6)
best_linear_mse = float(np.mean((A @ coef - Y) ** 2))
np.testing.assert_allclose(best_linear_mse, 0.25, atol=1e-6)


def train(*models, steps=200, lr=0.05):
    """Full-batch Adam on XOR for each model, all inside one tf.function; returns the final MSEs.

    One call traces once for all its models, instead of once per model (a new tf.function per model would
    trace every time: see the retracing-storm page)."""
    optimizers = [keras.optimizers.Adam(lr) for _ in models]
    for model, optimizer in zip(models, optimizers, strict=True):
        optimizer.build(model.trainable_variables)
    x, y = tf.constant(X), tf.constant(Y)

    @tf.function
    def run(n):
        for _ in tf.range(n):
            for model, optimizer in zip(models, optimizers, strict=True):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return [tf.reduce_mean(tf.square(model(x) - y)) for model in models]

    return [float(mse) for mse in run(tf.constant(steps))]


def mlp(activation, seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input(shape=(2,)),
                             keras.layers.Dense(8, activation=activation),
                             keras.layers.Dense(8, activation=activation),
                             keras.layers.Dense(1)])


deep_linear = mlp(None)
(linear_mse,) = train(deep_linear)
assert linear_mse > 0.25 - 1e-4, linear_mse          # cannot beat the best affine map

# Why: the three layers collapse into ONE affine map W x + b.
(W1, b1), (W2, b2), (W3, b3) = [layer.get_weights() for layer in deep_linear.layers]
W = W1 @ W2 @ W3
b = (b1 @ W2 + b2) @ W3 + b3
np.testing.assert_allclose(np.asarray(deep_linear(X)), X @ W + b, rtol=1e-4, atol=1e-5)
print(f"deep linear network: MSE {linear_mse:.4f} (best possible for any linear map: 0.25)")

# %% [markdown]
# **2. One non-linearity is enough.** The same architecture with ReLU or tanh reaches (near) zero error
# from two different seeds; and a hand-written two-unit ReLU network solves XOR *exactly*:
# `relu(x1 + x2) - 2 * relu(x1 + x2 - 1)`.

# %%
runs = [(activation, seed) for activation in ("relu", "tanh") for seed in range(2)]
for run, mse in zip(runs, train(*[mlp(activation, seed) for activation, seed in runs]), strict=True):
    assert mse < 1e-3, (run, mse)

by_hand = keras.Sequential([keras.Input(shape=(2,)),
                            keras.layers.Dense(2, activation="relu"),
                            keras.layers.Dense(1)])
by_hand.set_weights([np.array([[1, 1], [1, 1]], "float32"), np.array([0, -1], "float32"),
                     np.array([[1], [-2]], "float32"), np.array([0], "float32")])
np.testing.assert_array_equal(np.asarray(by_hand(X)), Y)
print("ReLU and tanh networks fit XOR; the hand-built ReLU net is exact:", np.asarray(by_hand(X)).ravel())

# %% [markdown]
# **3. The sigmoid gradient vanishes for large inputs, and through depth.** Derivatives computed by
# `tf.GradientTape`, compared with the closed form `s(1 - s)`.

# %%
def derivative(fn, x):
    x = tf.constant(x, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x).numpy()


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


points = np.array([0.0, 2.0, 5.0, 10.0], "float32")
d_sigmoid = derivative(tf.sigmoid, points)
np.testing.assert_allclose(d_sigmoid, sigmoid(points) * (1 - sigmoid(points)), rtol=1e-4)
assert d_sigmoid[0] == 0.25, d_sigmoid                          # the maximum, at 0
assert d_sigmoid[-1] < 1e-4, d_sigmoid                          # about 4.5e-5 at x = 10
np.testing.assert_array_equal(derivative(tf.nn.relu, points[1:]), np.ones(3, "float32"))  # ReLU: 1 for x > 0
assert derivative(tf.tanh, [10.0])[0] < 1e-7                     # tanh saturates too

# Ten sigmoid layers in a row: each contributes a factor <= 0.25 to the gradient.
def ten_sigmoids(v):
    for _ in range(10):
        v = tf.sigmoid(v)
    return v

chain = derivative(ten_sigmoids, [0.0])[0]
assert 0 < chain < 0.25 ** 10, chain
print(f"d sigmoid at 0, 2, 5, 10: {d_sigmoid}; through 10 sigmoids: {chain:.2e} (0.25**10 = {0.25**10:.2e})")

# %% [markdown]
# **4. Softmax gives a probability distribution; sigmoid a single probability.** Each row of softmax
# outputs sums to 1, adding a constant to all logits changes nothing, and logits of 1000 do not overflow.

# %%
logits = np.array([[2.0, 1.0, 0.1], [-3.0, 0.0, 30.0], [1000.0, 1000.0, 1000.0]], "float32")
probs = np.asarray(keras.activations.softmax(logits))
np.testing.assert_allclose(probs.sum(axis=-1), [1.0, 1.0, 1.0], rtol=1e-6)
assert ((probs >= 0) & (probs <= 1)).all(), probs
np.testing.assert_allclose(probs[2], [1 / 3] * 3, rtol=1e-6)                       # no overflow at 1000
assert np.isinf(np.asarray(keras.ops.exp(logits[2]))).all(), "exp(1000) alone overflows float32"   # so softmax shifts
np.testing.assert_allclose(np.asarray(keras.activations.softmax(logits + 5.0)), probs, rtol=1e-5, atol=1e-7)
assert probs[0].argmax() == 0 and probs[1, 2] > 0.999, probs                       # order kept, largest wins

sig = np.asarray(keras.activations.sigmoid(np.array([-5.0, 0.0, 5.0], "float32")))
assert (0 < sig).all() and (sig < 1).all() and sig[1] == 0.5, sig                   # one probability each
print("softmax rows:", [[f"{v:.4f}" for v in row] for row in probs], "row sums:", [f"{v:.6f}" for v in probs.sum(axis=-1)])

# %% [markdown]
# <h2 id="chart">The chart: activations and their gradients</h2>
#
# Left: the functions. Right: their derivatives, computed with `tf.GradientTape` over the same range.
# The sigmoid's derivative peaks at 0.25 and is almost zero beyond |x| ≈ 5; tanh peaks at 1 but saturates
# as fast; ReLU's derivative is a step (0 or 1); GELU and leaky ReLU keep some gradient for negative inputs.

# %%
# alt: Two panels over inputs from -6 to 6. Left: sigmoid, tanh, ReLU, leaky ReLU and GELU. Right: their derivatives from tf.GradientTape, with a dotted line at 0.25 marking the sigmoid's largest slope.
import matplotlib.pyplot as plt

xs = np.linspace(-6, 6, 241).astype("float32")
activations = {
    "sigmoid": tf.sigmoid,
    "tanh": tf.tanh,
    "relu": tf.nn.relu,
    "leaky relu (0.1)": lambda v: tf.nn.leaky_relu(v, alpha=0.1),
    "gelu": tf.nn.gelu,
}
fig, (ax_f, ax_d) = plt.subplots(1, 2, figsize=(10, 3.8))
for name, fn in activations.items():
    ax_f.plot(xs, fn(tf.constant(xs)).numpy(), label=name)
    ax_d.plot(xs, derivative(fn, xs), label=name)
ax_d.axhline(0.25, color="grey", linestyle=":", linewidth=1)
ax_d.annotate("sigmoid max = 0.25", xy=(0, 0.25), xytext=(1.5, 0.45), arrowprops={"arrowstyle": "->"})
ax_f.set(title="Activation functions", xlabel="input x", ylabel="f(x)", ylim=(-1.5, 3))
ax_d.set(title="Their derivatives (tf.GradientTape)", xlabel="input x", ylabel="f'(x)", ylim=(-0.2, 1.2))
for ax in (ax_f, ax_d):
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# <h2 id="strong-answer">What a strong answer covers</h2>
#
# - Composition of linear maps is linear: without activations depth is useless (XOR as the classic proof).
# - Universal approximation needs a non-linearity; one hidden layer with one suffices in principle.
# - Saturating activations (sigmoid, tanh) shrink gradients: sigmoid' ≤ 0.25, vanishing through depth
#   and for large |x|.
# - ReLU as the hidden-layer default, its dying-unit failure, and the smooth/leaky alternatives (GELU, SiLU,
#   leaky ReLU).
# - Output activations follow the task (none for regression, sigmoid for one probability, softmax for
#   class probabilities that sum to 1), and losses are best given logits.
# - An activation is not a loss and not an optimiser: it shapes the forward pass only.
#
# <h2 id="pitfalls">Where candidates lose the point</h2>
#
# - "More linear layers make the model more expressive": they collapse into one matrix (proved above).
# - "Sigmoid is fine everywhere": its gradient is at most a quarter and near zero once saturated.
# - Forgetting that ReLU can die: a unit with a large negative bias outputs 0 and gets no gradient.
# - Applying a sigmoid/softmax in the model *and* `from_logits=True` in the loss (double squashing).
#
# **Predict the output.** A three-layer network with `activation=None` everywhere is trained on XOR for
# 200 full-batch Adam steps. What final MSE do you expect: about 0, about 0.125, or about 0.25?

# %%
(drill_mse,) = train(mlp(None, seed=1))

# %% [markdown]
# <details class="success"><summary>Answer</summary>
#
# About **0.25**: the network is a single affine map in disguise, and the best affine fit to XOR predicts
# 0.5 everywhere (MSE 0.25). The check runs in the next cell.
#
# </details>

# %%
np.testing.assert_allclose(drill_mse, 0.25, atol=1e-3)

# %% [markdown]
# <h2 id="follow-ups">Follow-up practice</h2>
#
# <details class="question"><summary>Follow-up: what is a "dead" ReLU, and how does leaky ReLU help?</summary>
#
# If a ReLU unit's pre-activation is negative for every input (for example after a large update pushed its
# bias far below zero), its output and its gradient are 0 everywhere: gradient descent can never revive it.
# Leaky ReLU keeps a slope (here 0.1) for negative inputs, so the gradient is small but not zero. Checked in
# the next cell.
#
# </details>

# %%
keras.utils.set_random_seed(0)
dead = keras.layers.Dense(1, activation="relu")
leaky = keras.layers.Dense(1, activation=lambda v: tf.nn.leaky_relu(v, alpha=0.1))
grads = {}
for name, layer in (("relu", dead), ("leaky", leaky)):
    layer.build((None, 2))
    layer.bias.assign([-10.0])                    # pre-activation < 0 for every XOR input
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(layer(X))
    grads[name] = [g.numpy() for g in tape.gradient(out, layer.trainable_variables)]
assert all(np.all(g == 0) for g in grads["relu"]), grads["relu"]
np.testing.assert_allclose(grads["leaky"][1], [0.4], rtol=1e-6)   # bias gradient: 4 inputs x slope 0.1

# %% [markdown]
# <details class="question"><summary>Follow-up: why pass logits to the loss instead of sigmoid outputs?</summary>
#
# A float32 sigmoid rounds to exactly 1.0 once the logit passes about 17, so a loss computed from
# *probabilities* must clip and caps out near 16 however wrong the prediction is; from logits it is exact
# (here 20). One Keras 3 detail verified here: when the probabilities come straight from `keras.ops.sigmoid`
# on the TensorFlow backend, `BinaryCrossentropy` recovers the logits attached to that tensor and is exact
# too; the cap hits when the probabilities arrive as plain numbers (a NumPy array, a saved prediction).
#
# </details>

# %%
bce_logits = keras.losses.BinaryCrossentropy(from_logits=True)
bce_probs = keras.losses.BinaryCrossentropy()
label, logit = np.zeros((1, 1), "float32"), np.full((1, 1), 20.0, "float32")
probability = np.asarray(keras.ops.sigmoid(logit))
assert probability[0, 0] == 1.0, probability                             # saturated in float32
assert float(tf.sigmoid(17.0)) == 1.0 and float(tf.sigmoid(16.0)) < 1.0     # saturation begins near 17
np.testing.assert_allclose(float(bce_logits(label, logit)), 20.0, rtol=1e-5)
capped = float(bce_probs(label, probability))                            # plain numbers: clipped
assert 15.0 < capped < 16.5, capped
np.testing.assert_allclose(float(bce_probs(label, keras.ops.sigmoid(logit))), 20.0, rtol=1e-5)

# %% [markdown]
# <h2 id="tip">Interview tip</h2>
#
# Give the one-line algebra (`W2(W1x + b1) + b2` is still affine), name XOR as the counter-example, then
# say: "The sigmoid's derivative is at most 0.25 and about 4.5e-5 at x = 10, so I use ReLU in hidden
# layers, and I give the loss logits rather than sigmoid or softmax outputs."
