# ---
# description: "Overfitting shows as a train/validation gap; L2, dropout and early stopping each beat the baseline's validation loss here."
# tags: [medium, training, keras]
# ---

# %% [markdown]
# # How do you fight overfitting?
#
# <h2 id="quick-answer">Quick answer</h2>
#
# Overfitting shows as a **gap**: training loss keeps falling while validation loss turns and rises. Fight it
# by limiting what the model can memorise: **weight regularisation** (an L2 penalty), **dropout**, **early
# stopping** on validation loss (restoring the best weights), plus more or augmented data and a smaller model.
# Always judge by validation loss, never training loss. Below, one over-sized network on a small noisy dataset
# is trained four ways, and each remedy ends with a clearly lower validation loss than the baseline.
#
# <h2 id="detailed-answer">Detailed answer</h2>
#
# - **Detect it**: hold out validation data, plot training and validation loss per epoch. The epoch where
#   validation loss bottoms out is where memorising noise starts to cost more than learning signal. How
#   `loss` and `val_loss` are each measured, and why validation can sit below training:
#   [reading learning curves](../reading-learning-curves/#proof).
# - **L2 regularisation** (`kernel_regularizer=keras.regularizers.L2(λ)`) adds λ·Σw² to the loss, so every
#   gradient step also pulls each weight towards zero in proportion to its size: the trained weights end
#   up smaller. **L1** (`keras.regularizers.L1(λ)`) adds λ·Σ|w|, a pull of constant size that favours
#   weights at or near zero. Both are terms of the *loss*, not a different optimiser: the same Adam
#   minimises `loss = cross-entropy + penalty`, and Keras reports that sum as `loss`.
# - **Dropout** (`keras.layers.Dropout(rate)`) zeroes a random fraction `rate` of its inputs at every
#   training step and scales the survivors by `1 / (1 - rate)`, so the expected sum is unchanged; the idea
#   is that no unit can rely on one particular other unit. At inference it is the identity.
# - **Early stopping** (`keras.callbacks.EarlyStopping(monitor="val_loss", patience=…,
#   restore_best_weights=True)`) checks the monitored value after each epoch, stops once it has not
#   improved for `patience` epochs, and rolls back to the best epoch's weights.
# - Also: more data, or **data augmentation** (random flips, crops, rotations as Keras layers such as
#   `keras.layers.RandomFlip`; how they behave and where to put them:
#   [augmentation layers](../../use-cases/image-augmentation-layers/#step-layers)); a smaller network; label
#   smoothing; ensembling. **Batch normalisation** (`keras.layers.BatchNormalization`) is often listed too:
#   in training it normalises with each batch's own statistics (a source of noise), at inference with
#   moving averages ([batch norm in training vs inference](../batchnorm-training-vs-inference/#proof)); treat
#   its regularising effect as a side effect, not as a remedy on its own. The
#   [Keras overfit and underfit tutorial](https://www.tensorflow.org/tutorials/keras/overfit_and_underfit)
#   walks through the same remedies.
#
# <h2 id="proof">Proof</h2>
#
# A small, noisy binary task: 5 features, the label is whether `x0·x1 > 0`, with 10% of labels flipped.
# Only 200 training examples, 500 validation examples, and a network with two hidden layers of 64 units:
# plenty of capacity to memorise the flipped labels.

# %%
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
tf.config.experimental.enable_op_determinism()   # this notebook runs in its own kernel process

rng = np.random.default_rng(0)
FEATURES, N_TRAIN, N_VAL = 5, 200, 500


def make_split(n):
    x = rng.normal(size=(n, FEATURES)).astype("float32")
    y = (x[:, 0] * x[:, 1] > 0).astype("float32")
    flip = rng.random(n) < 0.10                   # label noise the model should not learn
    y[flip] = 1.0 - y[flip]
    return x, y[:, None]


x_train, y_train = make_split(N_TRAIN)
x_val, y_val = make_split(N_VAL)
assert x_train.shape == (N_TRAIN, FEATURES) and x_val.shape == (N_VAL, FEATURES), (x_train.shape, x_val.shape)

# %% [markdown]
# One builder for all runs: same architecture, same initial weights (same seed), same optimizer. Only the
# remedy changes. Each "epoch" is 5 full-batch steps, to keep the run short on a CPU.

# %%
EPOCHS, STEPS = 20, 5
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(N_TRAIN).repeat()
val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(N_VAL).cache()   # one batch


def build(l2=0.0, dropout=0.0):
    keras.utils.set_random_seed(1)               # identical initial weights for every run
    reg = keras.regularizers.L2(l2) if l2 else None
    layers = [keras.Input((FEATURES,))]
    for _ in range(2):
        layers.append(keras.layers.Dense(64, activation="relu", kernel_regularizer=reg))
        if dropout:
            layers.append(keras.layers.Dropout(dropout))
    layers.append(keras.layers.Dense(1, activation="sigmoid", kernel_regularizer=reg))
    model = keras.Sequential(layers)
    # "bce" is the plain cross-entropy, without the L2 penalty, so runs compare like with like
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy",
                  metrics=[keras.metrics.BinaryCrossentropy(name="bce")])
    return model


def train(callbacks=(), **kwargs):
    model = build(**kwargs)
    history = model.fit(train_ds, steps_per_epoch=STEPS, epochs=EPOCHS, validation_data=val_ds,
                        shuffle=False, callbacks=list(callbacks), verbose=0)
    final = model.evaluate(val_ds, verbose=0, return_dict=True)["bce"]
    return model, history.history, final


runs = {}
runs["baseline"] = train()
runs["L2 (λ=0.01)"] = train(l2=1e-2)
runs["dropout (0.5)"] = train(dropout=0.5)
early = keras.callbacks.EarlyStopping(monitor="val_loss", patience=3, restore_best_weights=True)
runs["early stopping"] = train(callbacks=[early])

final_val = {name: final for name, (_, _, final) in runs.items()}
final_val

# %% [markdown]
# The claims, asserted. The baseline memorises the training set (training loss near zero) while its validation
# loss climbs well above its own best epoch. Every remedy ends at least 25% below the baseline's final
# validation loss.

# %%
_, base_hist, base_final = runs["baseline"]
assert base_hist["bce"][-1] < 0.05, base_hist["bce"][-1]                       # memorised
assert base_final > 1.5 * min(base_hist["val_bce"]), (base_final, min(base_hist["val_bce"]))  # then got worse

for name in ["L2 (λ=0.01)", "dropout (0.5)", "early stopping"]:
    assert final_val[name] < 0.75 * base_final, (name, final_val[name], base_final)

_, es_hist, es_final = runs["early stopping"]
assert len(es_hist["val_bce"]) < EPOCHS, len(es_hist["val_bce"])               # it stopped early
np.testing.assert_allclose(es_final, min(es_hist["val_bce"]), rtol=1e-4, atol=1e-5)  # best weights restored

# %% [markdown]
# **How each remedy works**, checked on the trained models. L2: the penalty Keras adds is exactly
# λ·Σw² over the regularised kernels, it is the whole difference between the reported `loss` and the plain
# cross-entropy, and the L2 run's weights end up much smaller than the baseline's. L1 is the same mechanism
# with λ·Σ|w|.

# %%
def kernels(model):
    return [layer.kernel.numpy() for layer in model.layers if hasattr(layer, "kernel")]


l2_model = runs["L2 (λ=0.01)"][0]
penalty = float(sum(keras.ops.convert_to_numpy(loss) for loss in l2_model.losses))
np.testing.assert_allclose(penalty, 0.01 * sum(float(np.sum(k**2)) for k in kernels(l2_model)), rtol=1e-4)
scores = l2_model.evaluate(x_val, y_val, verbose=0, return_dict=True)
np.testing.assert_allclose(scores["loss"] - scores["bce"], penalty, rtol=1e-3, atol=1e-5)   # loss = bce + penalty

squared_norm = {name: sum(float(np.sum(k**2)) for k in kernels(runs[name][0])) for name in ("baseline", "L2 (λ=0.01)")}
print({name: round(v, 1) for name, v in squared_norm.items()})
assert squared_norm["L2 (λ=0.01)"] < 0.5 * squared_norm["baseline"], squared_norm

l1_layer = keras.layers.Dense(4, kernel_regularizer=keras.regularizers.L1(0.01))
l1_layer.build((None, FEATURES))
l1_layer(x_val[:2])
np.testing.assert_allclose(float(l1_layer.losses[0]), 0.01 * float(np.abs(l1_layer.kernel.numpy()).sum()), rtol=1e-5)

# %% [markdown]
# Dropout: in training, about half of the inputs are zeroed and the rest are doubled (rate 0.5), so the
# mean is preserved; at inference nothing changes. Early stopping: the run ended exactly `patience` (3)
# epochs after its best epoch.

# %%
dropout = keras.layers.Dropout(0.5, seed=0)
ones = np.ones((1, 10_000), "float32")
dropped = dropout(ones, training=True).numpy()
assert set(np.unique(dropped).tolist()) == {0.0, 2.0}, np.unique(dropped)     # zeroed or scaled by 1/(1-0.5)
assert 0.45 < float((dropped == 0).mean()) < 0.55, float((dropped == 0).mean())
np.testing.assert_allclose(dropped.mean(), 1.0, atol=0.1)
np.testing.assert_array_equal(dropout(ones, training=False).numpy(), ones)

_, es_hist_check, _ = runs["early stopping"]
assert len(es_hist_check["val_loss"]) == early.best_epoch + 3 + 1, (len(es_hist_check["val_loss"]), early.best_epoch)

# %% [markdown]
# The curves: validation loss per epoch for the four runs (solid), the baseline's training loss (dashed), and
# the epoch whose weights early stopping restored (star; that run shares the baseline's first epochs).
# The gap between the dashed line and the baseline's validation curve is the overfitting.

# %%
# alt: Validation loss per epoch for the baseline and three remedies, with the baseline's training loss dashed and a red star where early stopping's restored weights sit.
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 4))
for name, (_, hist, _) in runs.items():
    epochs = np.arange(1, len(hist["val_bce"]) + 1)
    ax.plot(epochs, hist["val_bce"], label=f"{name}: validation", linewidth=2)
ax.plot(np.arange(1, EPOCHS + 1), base_hist["bce"], "k--", label="baseline: training")
best = int(np.argmin(es_hist["val_bce"]))
ax.scatter([best + 1], [es_hist["val_bce"][best]], s=80, c="red", marker="*", zorder=3,
           label="early stopping: restored weights")
ax.set_xlabel("epoch (5 full-batch steps each)")
ax.set_ylabel("binary cross-entropy")
ax.set_title("Validation loss: baseline vs three remedies")
ax.set_ylim(0, max(base_hist["val_bce"]) * 1.05)
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# <h3 id="predict">Predict the output</h3>
#
# Which of the four runs ends with the **lowest training loss**: the baseline, or one of the regularised runs?
#
# <details><summary>Answer</summary>
#
# The baseline, by far: it has memorised the training set, flipped labels included. Low training loss is
# the symptom, not the goal. Dropout and L2 keep training loss higher *and* validation loss lower. The next
# cell checks it.
#
# </details>

# %%
final_train = {name: hist["bce"][-1] for name, (_, hist, _) in runs.items()}
assert min(final_train, key=final_train.get) == "baseline", final_train
assert max(final_val, key=final_val.get) == "baseline", final_val

# %% [markdown]
# <h2 id="strong-answer">What a strong answer covers</h2>
#
# - The diagnosis first: a train/validation gap that grows, read from curves, not a single number.
# - Several remedies and how each one works, with its Keras spelling: L1/L2 (`kernel_regularizer=`, a
#   penalty in the loss that shrinks weights), dropout (`Dropout(rate)`, training-time zeroing and
#   rescaling), early stopping (`EarlyStopping(patience=…, restore_best_weights=True)`, less training, best
#   weights restored), data (more/augmented, e.g. `RandomFlip`), capacity (smaller model); batch
#   normalisation as a side effect at most.
# - Regularisation is not an optimiser: it changes what is minimised, not how.
# - Tuning them on validation data and reporting on a separate test set.
# - That dropout and regularisation raise the training loss on purpose.
#
# <h2 id="pitfalls">Where candidates lose the point</h2>
#
# - Judging by training accuracy or loss.
# - `EarlyStopping` without `restore_best_weights=True`: the model keeps the weights of the *last* epoch,
#   `patience` epochs past the best one (asserted on [callbacks, proof](../callbacks/#proof); follow-up 1
#   shows what the restore buys).
# - Comparing the `loss` of an L2 run with an unregularised run: `loss` includes the penalty; compare a plain
#   metric such as `bce` (as this notebook does).
# - Forgetting that dropout is off at inference, or calling the model with `training=True` while predicting
#   (follow-up 2).
#
# <h2 id="follow-ups">Follow-up practice</h2>
#
# <details><summary>Follow-up 1: what does <code>restore_best_weights=True</code> buy you?</summary>
#
# Without it, training stops `patience` epochs after the best epoch and keeps those later, worse weights. The
# early-stopping run's own history shows the last recorded validation loss is above its best one, yet the
# restored model evaluates at the best value.
#
# </details>

# %%
assert es_hist["val_bce"][-1] > min(es_hist["val_bce"]), es_hist["val_bce"]
assert early.best_epoch == int(np.argmin(es_hist["val_loss"])), (early.best_epoch, es_hist["val_loss"])
np.testing.assert_allclose(es_final, min(es_hist["val_bce"]), rtol=1e-4, atol=1e-5)

# %% [markdown]
# <details><summary>Follow-up 2: is dropout active when you call <code>predict</code>?</summary>
#
# No. Dropout only acts when the layer runs with `training=True` (as inside `fit`); `predict` and a plain call
# without `training=` use `training=False`, where it passes inputs through unchanged and outputs are
# deterministic. The cell compares all three with an explicit `training=False` call.
#
# </details>

# %%
dropout_model = runs["dropout (0.5)"][0]
inference_a = dropout_model(x_val[:8], training=False).numpy()
inference_b = dropout_model.predict(x_val[:8], verbose=0)
plain_1 = dropout_model(x_val[:8]).numpy()                     # no training= argument
plain_2 = dropout_model(x_val[:8]).numpy()
training_mode = dropout_model(x_val[:8], training=True).numpy()
np.testing.assert_allclose(inference_a, inference_b, rtol=1e-5, atol=1e-6)
np.testing.assert_array_equal(plain_1, inference_a)            # a plain call is inference mode
np.testing.assert_array_equal(plain_1, plain_2)                # and deterministic
assert not np.allclose(inference_a, training_mode), "dropout did nothing in training mode"

# %% [markdown]
# <h2 id="tip">Interview tip</h2>
#
# Draw the two curves first (training falling, validation U-shaped), point at the minimum and say:
# "Everything I do is about moving that minimum down or stopping there: early stopping first because it is
# free, then L2 or dropout with one hyperparameter each, and more data when I can get it."
