# ---
# description: "History's loss is the running mean over an epoch's batches, with weights still moving and dropout on; val_loss is one end-of-epoch pass in inference mode. Read the curves with that in mind: underfitting is both high and close, overfitting is a widening gap."
# tags: [medium, training, keras]
# ---

# %% [markdown]
# # How do you read learning curves? Underfitting vs overfitting
#
# <h2 id="quick-answer">Quick answer</h2>
#
# Plot `history.history["loss"]` and `["val_loss"]` per epoch. **Underfitting**: both curves stay high, close
# together, and flatten early. **Overfitting**: training loss keeps falling while validation loss bottoms out
# and rises, so the gap widens. But the two numbers are not measured the same way. `loss` is the average of
# the batch losses *during* the epoch: the weights change between batches and dropout is on. `val_loss` is
# one pass over the validation data *after* the epoch, in inference mode. So validation can sit below
# training with no leak at all, and dropout makes the gap look smaller than it is.
#
# <h2 id="detailed-answer">Detailed answer</h2>
#
# - **How `loss` is computed.** Keras keeps a `Mean` metric named `loss`. After each training batch it adds
#   that batch's loss, weighted by the number of samples in the batch. The weights used for a batch are the
#   ones from *before* that batch's update. The epoch's value is the mean over all batches, so it describes
#   a model that existed on average half an epoch ago. The forward pass runs with `training=True`: dropout
#   is active, and any regularisation penalty is added to the loss (that part is shown on
#   [fighting overfitting, proof](../overfitting/#proof)). See `train_step` in
#   [keras/src/backend/tensorflow/trainer.py](https://github.com/keras-team/keras/blob/v3.15.1/keras/src/backend/tensorflow/trainer.py).
# - **How `val_loss` is computed.** At the end of each epoch, `fit` calls `evaluate` on the validation data
#   with the final weights of that epoch, with `training=False` (dropout off). Same file, `fit` and
#   `test_step`.
# - **What that does to the picture.** Early in training the model improves a lot within one epoch, so
#   `loss` (an average over the epoch) is much higher than the loss of the end-of-epoch model. Validation
#   loss can then be *below* training loss in the first epochs. Dropout adds its own noise to `loss` for
#   the whole run. Both effects push `loss` up, not `val_loss`.
# - **A like-for-like training curve.** Evaluate the training data (or a fixed slice of it) at the end of
#   each epoch in inference mode, for example in a callback. That number and `val_loss` come from the same
#   weights and the same mode. Their gap is the real generalisation gap.
# - **Underfitting.** Training loss stays high (well above the noise floor of the data, if you know it),
#   validation loss is close to it, and both plateau. More epochs do not help. Add capacity or better
#   features, or lower regularisation.
# - **Overfitting.** Training loss keeps falling, even below the noise floor (the model is learning the
#   noise). Validation loss reaches a minimum and then rises. Stop at the minimum (early stopping), add
#   data, or regularise: see [fighting overfitting](../overfitting/).
# - **A good fit.** Training loss near the noise floor, validation loss close to it, and both flat.
#
# <h2 id="proof">Proof</h2>
#
# The data: y = sin(3x) plus Gaussian noise with standard deviation 0.3, so no model can beat a mean
# squared error of about 0.09 on new data (the noise floor). A large training set (400 points), a small one
# (its first 16 points) and a validation set (500 points).

# %%
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
tf.config.experimental.enable_op_determinism()   # this notebook runs in its own kernel process

rng = np.random.default_rng(0)
NOISE = 0.3


def make_split(n):
    x = rng.uniform(-1, 1, size=(n, 1)).astype("float32")
    y = (np.sin(3 * x) + NOISE * rng.normal(size=(n, 1))).astype("float32")
    return x, y


x_big, y_big = make_split(400)
x_small, y_small = x_big[:16], y_big[:16]
x_val, y_val = make_split(500)
noise_floor = float(np.mean((y_val - np.sin(3 * x_val)) ** 2))   # the error of the true function
np.testing.assert_allclose(noise_floor, NOISE**2, rtol=0.15)
noise_floor

# %% [markdown]
# **What `loss` and `val_loss` are.** A small network is trained for 5 epochs with plain SGD, in batches of
# 32 over 200 points: six batches of 32 and a last one of 8. A callback records the loss of each batch
# just before `fit` trains on it (so with the weights that batch sees), and, after each epoch, the loss of
# the whole training set and of the validation set with the end-of-epoch weights. Then:
#
# - `loss` equals the sample-weighted mean of the per-batch losses, not their plain mean;
# - `val_loss` equals the loss of the end-of-epoch model on the validation set;
# - in epoch 1, `loss` is more than 1.2 times the end-of-epoch model's loss on the *same training data*
#   (this run: 0.454 against 0.282, 1.61 times), and `val_loss` (0.288) is below `loss` although the
#   validation data comes from the same distribution.

# %%
BATCH = 32
x_train, y_train = x_big[:200], y_big[:200]
mse = keras.losses.MeanSquaredError()


class Probe(keras.callbacks.Callback):
    """Records what each batch's loss was before its update, and end-of-epoch losses in inference mode."""

    def on_train_begin(self, logs=None):
        self.batch_losses, self.batch_sizes, self.end_train, self.end_val = [], [], [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.batch_losses.append([])
        self.batch_sizes.append([])

    def on_train_batch_begin(self, batch, logs=None):
        xb, yb = x_train[batch * BATCH:(batch + 1) * BATCH], y_train[batch * BATCH:(batch + 1) * BATCH]
        self.batch_losses[-1].append(float(mse(yb, self.model(xb, training=True))))
        self.batch_sizes[-1].append(len(xb))

    def on_epoch_end(self, epoch, logs=None):
        self.end_train.append(float(mse(y_train, self.model(x_train, training=False))))
        self.end_val.append(float(mse(y_val, self.model(x_val, training=False))))


keras.utils.set_random_seed(1)
small_net = keras.Sequential([keras.Input((1,)), keras.layers.Dense(32, activation="tanh"), keras.layers.Dense(1)])
small_net.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
probe = Probe()
train_batches = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(BATCH)   # no shuffle: batch i is known
val_batches = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(BATCH)
hist = small_net.fit(train_batches, epochs=5, validation_data=val_batches, shuffle=False, verbose=0,
                     callbacks=[probe]).history

assert probe.batch_sizes[0] == [32] * 6 + [8], probe.batch_sizes[0]
for epoch in range(5):
    weighted = np.average(probe.batch_losses[epoch], weights=probe.batch_sizes[epoch])
    np.testing.assert_allclose(hist["loss"][epoch], weighted, rtol=1e-5)           # loss: weighted batch mean
    np.testing.assert_allclose(hist["val_loss"][epoch], probe.end_val[epoch], rtol=1e-5)   # val: end weights
plain_mean = float(np.mean(probe.batch_losses[0]))
assert abs(plain_mean - hist["loss"][0]) > 1e-3, (plain_mean, hist["loss"][0])     # the weighting matters

lag = hist["loss"][0] / probe.end_train[0]
assert lag > 1.2, (hist["loss"][0], probe.end_train[0])           # epoch 1: loss describes an older model
assert hist["val_loss"][0] < hist["loss"][0], (hist["val_loss"][0], hist["loss"][0])
{"epoch 1 loss": round(hist["loss"][0], 3), "end-of-epoch train loss": round(probe.end_train[0], 3),
 "epoch 1 val_loss": round(hist["val_loss"][0], 3), "ratio": round(lag, 2)}

# %% [markdown]
# **Underfitting, overfitting and a good fit.** Three runs, each 30 epochs of 10 full-batch Adam steps:
# a linear model on the 400 points (too little capacity), a network with two hidden layers of 128 units on
# the 16 points (too little data), and the same network on the 400 points. A callback adds the
# like-for-like training curve (`train_eval`: the whole training set, inference mode, end of each epoch).
# A fourth run is the 16-point network with `Dropout(0.3)` after each hidden layer.

# %%
EPOCHS, STEPS = 30, 10
val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(len(x_val)).cache()


class TrainEval(keras.callbacks.Callback):
    """The training set's loss at the end of each epoch, in inference mode: comparable with val_loss."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.values = x, y, []

    def on_epoch_end(self, epoch, logs=None):
        self.values.append(float(mse(self.y, self.model(self.x, training=False))))


def run(x, y, hidden=(), dropout=0.0, lr=1e-2):
    keras.utils.set_random_seed(1)                # the same initial weights for the same architecture
    layers = [keras.Input((1,))]
    for width in hidden:
        layers.append(keras.layers.Dense(width, activation="relu"))
        if dropout:
            layers.append(keras.layers.Dropout(dropout))
    layers.append(keras.layers.Dense(1))
    model = keras.Sequential(layers)
    model.compile(optimizer=keras.optimizers.Adam(lr), loss="mse")
    train_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(len(x)).cache().repeat()
    train_eval = TrainEval(x, y)
    history = model.fit(train_ds, steps_per_epoch=STEPS, epochs=EPOCHS, validation_data=val_ds, shuffle=False,
                        verbose=0, callbacks=[train_eval]).history
    return {"loss": history["loss"], "val_loss": history["val_loss"], "train_eval": train_eval.values}


curves = {
    "underfit: linear, 400 points": run(x_big, y_big, lr=0.1),
    "overfit: 2x128, 16 points": run(x_small, y_small, hidden=(128, 128)),
    "good fit: 2x128, 400 points": run(x_big, y_big, hidden=(128, 128)),
    "dropout 0.3: 2x128, 16 points": run(x_small, y_small, hidden=(128, 128), dropout=0.3),
}
under, over, good, drop = curves.values()
{name: {k: round(v[-1], 3) for k, v in c.items()}
 | {"best val": round(min(c["val_loss"]), 3), "best val epoch": int(np.argmin(c["val_loss"])) + 1}
 for name, c in curves.items()}

# %% [markdown]
# The signatures, asserted on those runs (the noise floor measured on the validation set is 0.095):
#
# - **Underfit**: training loss ends above twice the noise floor, validation is within 10% of it, and the
#   training curve is flat over the last 10 epochs (changes by less than 1%).
# - **Overfit**: training loss ends *below* the noise floor (it has learned noise), validation loss ends
#   more than 20% above its own minimum, and that minimum came in the first 10 epochs. Validation ends
#   more than three times the training loss.
# - **Good fit**: training loss within 15% of the noise floor, validation within 15% of training.

# %%
assert under["train_eval"][-1] > 2 * noise_floor, under["train_eval"][-1]
assert abs(under["val_loss"][-1] / under["train_eval"][-1] - 1) < 0.10, (under["val_loss"][-1], under["train_eval"][-1])
last_ten = under["train_eval"][-11:]          # the values at the start and end of the last 10 epochs, and between
assert (max(last_ten) - min(last_ten)) / last_ten[-1] < 0.01, last_ten

assert over["train_eval"][-1] < noise_floor, over["train_eval"][-1]
assert over["val_loss"][-1] > 1.2 * min(over["val_loss"]), (over["val_loss"][-1], min(over["val_loss"]))
assert int(np.argmin(over["val_loss"])) < 10, int(np.argmin(over["val_loss"]))
assert over["val_loss"][-1] > 3 * over["train_eval"][-1], (over["val_loss"][-1], over["train_eval"][-1])

assert abs(good["train_eval"][-1] / noise_floor - 1) < 0.15, (good["train_eval"][-1], noise_floor)
assert abs(good["val_loss"][-1] / good["train_eval"][-1] - 1) < 0.15, (good["val_loss"][-1], good["train_eval"][-1])

# %% [markdown]
# **Dropout and the gap.** Without dropout, full-batch `loss` and the like-for-like `train_eval` agree by
# the end of the run (within 5%, asserted; 2% measured on the test machines, where the CPU model moves the last
# digit: only the within-epoch lag separates them). With dropout, `loss` sits above
# `train_eval` in every epoch after the first, by more than 10% at the end, because every training batch
# runs with units zeroed (this run ends at 0.099 against 0.068). So the gap you read off the History
# (`val_loss` − `loss`, 0.064 here) is smaller than the real gap (`val_loss` − `train_eval`, 0.095).

# %%
np.testing.assert_allclose(over["loss"][-1], over["train_eval"][-1], rtol=0.05)
assert all(hist_loss > eval_loss for hist_loss, eval_loss in zip(drop["loss"][1:], drop["train_eval"][1:], strict=True)), (
    drop["loss"], drop["train_eval"])
assert drop["loss"][-1] > 1.1 * drop["train_eval"][-1], (drop["loss"][-1], drop["train_eval"][-1])
history_gap = drop["val_loss"][-1] - drop["loss"][-1]
real_gap = drop["val_loss"][-1] - drop["train_eval"][-1]
assert history_gap < real_gap, (history_gap, real_gap)
{"History gap": round(history_gap, 3), "real gap": round(real_gap, 3)}

# %% [markdown]
# **The curves.** Four panels, one per run, each with the mean squared error per epoch on a log scale.
# Solid blue: History's `loss`. Dashed green: the training set evaluated at the end of each epoch in
# inference mode. Solid orange: `val_loss`. Grey dotted line: the noise floor at 0.095. Underfit (top
# left): all three curves lie together at about 0.25, well above the floor, flat after the first few
# epochs. Overfit (top right): training drops to about 0.05, below the floor, while validation dips to
# about 0.13 at epoch 3, then climbs back to about 0.16 and stays there. Good fit (bottom left): all
# curves settle on the floor, validation a little above training. Dropout (bottom right): the blue
# `loss` curve is jagged and sits visibly above the dashed end-of-epoch training curve, which is the one
# to compare with the orange validation curve.

# %%
# alt: Four log-scale panels, one per training scenario, each with the loss History records, the training loss measured at the end of each epoch, val_loss and a dotted noise floor, against epochs.
import matplotlib.pyplot as plt

fig, axes = plt.subplots(2, 2, figsize=(9, 6), sharex=True, sharey=True)
epochs = np.arange(1, EPOCHS + 1)
for ax, (name, c) in zip(axes.flat, curves.items(), strict=True):
    ax.plot(epochs, c["loss"], color="tab:blue", label="History loss")
    ax.plot(epochs, c["train_eval"], "--", color="tab:green", label="train, end of epoch")
    ax.plot(epochs, c["val_loss"], color="tab:orange", label="val_loss")
    ax.axhline(noise_floor, color="grey", linestyle=":", label="noise floor")
    ax.set_title(name, fontsize=10)
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
for ax in axes[1]:
    ax.set_xlabel(f"epoch ({STEPS} full-batch steps each)")
for ax in axes[:, 0]:
    ax.set_ylabel("mean squared error")
axes[0, 0].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# <h3 id="predict">Predict the output</h3>
#
# A network with `Dropout(0.5)` is trained for 5 epochs, and the *training data itself* is passed as
# `validation_data`. Which is lower in every epoch, `loss` or `val_loss`?
#
# <details><summary>Answer</summary>
#
# `val_loss`, although both are computed on exactly the same examples. `val_loss` uses the end-of-epoch
# weights with dropout off; `loss` averages batches run with half the units dropped and with older weights.
# Validation below training is therefore not proof of a leak. The next cell checks it.
#
# </details>

# %%
keras.utils.set_random_seed(2)
same_data = keras.Sequential([keras.Input((1,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dropout(0.5),
                              keras.layers.Dense(1)])
same_data.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
same_hist = same_data.fit(x_train, y_train, batch_size=50, epochs=5, validation_data=(x_train, y_train),
                          shuffle=False, verbose=0).history
assert all(val < train for val, train in zip(same_hist["val_loss"], same_hist["loss"], strict=True)), same_hist

# %% [markdown]
# <h2 id="strong-answer">What a strong answer covers</h2>
#
# - The three shapes: both high and flat (underfit), a widening gap with validation turning up (overfit),
#   both low and close (good fit); and what to do about each.
# - How the two numbers differ: `loss` is a running, sample-weighted mean over the epoch's batches, with
#   the weights moving and dropout on; `val_loss` is one inference-mode pass with the end-of-epoch weights.
# - The consequences: validation below training early on, or throughout with dropout or a weight penalty,
#   is expected; a like-for-like training curve comes from evaluating the training data at epoch end.
# - Judging the minimum and the trend of validation loss, not single epochs; knowing the noise floor or a
#   simple baseline to tell "high" from "low".
#
# <h2 id="pitfalls">Where candidates lose the point</h2>
#
# - "Validation loss below training loss means a bug or a leak." Often it means dropout, a regularisation
#   penalty in `loss`, or the half-epoch lag (all three asserted above or on
#   [fighting overfitting](../overfitting/#proof)). Rule out those first, then look for leaks
#   ([splits that leak](../train-validation-test-splits/)).
# - Reading the size of the History gap as the size of overfitting when the model uses dropout: the real
#   gap is larger.
# - Calling a flat, high training curve "converged": it is underfitting when it sits far above what the
#   data allows.
# - Plotting `val_loss` against the wrong epochs when `validation_freq` is above 1 (follow-up 2).
#
# <h2 id="follow-ups">Follow-up practice</h2>
#
# <details><summary>Follow-up 1: how do you get a training curve you can compare with <code>val_loss</code>?</summary>
#
# Evaluate the training set (or a fixed sample of it) at the end of every epoch with `training=False`, as the
# `TrainEval` callback above does. It gives the same number as calling `model.evaluate` on the training data
# after `fit`, as the cell checks for the last epoch of the dropout run.
#
# </details>

# %%
keras.utils.set_random_seed(1)
check = keras.Sequential([keras.Input((1,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dropout(0.3),
                          keras.layers.Dense(1)])
check.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
check_eval = TrainEval(x_small, y_small)
check.fit(x_small, y_small, batch_size=16, epochs=3, shuffle=False, verbose=0, callbacks=[check_eval])
np.testing.assert_allclose(check_eval.values[-1], check.evaluate(x_small, y_small, verbose=0), rtol=1e-5)

# %% [markdown]
# <details><summary>Follow-up 2: with <code>validation_freq=2</code>, what does the History hold?</summary>
#
# Validation runs only after epochs 2, 4, 6, … ([`fit` docs](https://keras.io/api/models/model_training_apis/#fit-method)),
# so `val_loss` has half as many entries as `loss`, and entry *i* belongs to epoch 2(*i* + 1). Plotted
# against `range(len(val_loss))` it lands on the wrong epochs.
#
# </details>

# %%
freq_hist = check.fit(x_small, y_small, batch_size=16, epochs=6, validation_data=(x_val, y_val),
                      validation_freq=2, shuffle=False, verbose=0).history
assert len(freq_hist["loss"]) == 6 and len(freq_hist["val_loss"]) == 3, {k: len(v) for k, v in freq_hist.items()}

# %% [markdown]
# <details><summary>Follow-up 3: which curve should early stopping watch?</summary>
#
# `val_loss` (or a validation metric): it is the estimate of error on new data, and training loss keeps
# falling while the model overfits, as the overfit run shows. With `restore_best_weights=True` the model
# ends at the validation minimum ([fighting overfitting, follow-up 1](../overfitting/#follow-ups)).
#
# </details>

# %%
assert over["train_eval"][-1] < min(over["train_eval"][:10]), over["train_eval"]    # training still improving
assert over["val_loss"][-1] > min(over["val_loss"][:10]), over["val_loss"]           # validation already worse

# %% [markdown]
# <h2 id="tip">Interview tip</h2>
#
# Say: "I read the shape, then I check the measurement: Keras's `loss` is a running average over the epoch
# with dropout on, `val_loss` is a clean pass at the end, so I compare validation with the training set
# evaluated the same way before I call anything overfitting or a leak."
