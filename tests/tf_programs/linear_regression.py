"""A TF 2 custom training loop (the "Basic training loops" guide, tensorflow.org/guide/basic_training_loops):
a tf.Module fit to a noisy line by GradientTape, then a one-unit tf.keras.Sequential
fit by compile/fit. With TensorFlow's imports in place of minikeras's it runs on TensorFlow 2.21;
``tests/test_import_as_tf.py`` runs it with minikeras."""
import minikeras as tf

TRUE_W = 3.0
TRUE_B = 2.0

NUM_EXAMPLES = 201

x = tf.linspace(-2, 2, NUM_EXAMPLES)
x = tf.cast(x, tf.float32)


def f(x):
  return x * TRUE_W + TRUE_B


noise = tf.random.normal(shape=[NUM_EXAMPLES])
y = f(x) + noise


class MyModel(tf.Module):
  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.w = tf.Variable(5.0)
    self.b = tf.Variable(0.0)

  def __call__(self, x):
    return self.w * x + self.b


model = MyModel()


def loss(target_y, predicted_y):
  return tf.reduce_mean(tf.square(target_y - predicted_y))


def train(model, x, y, learning_rate):
  with tf.GradientTape() as t:
    current_loss = loss(y, model(x))
  dw, db = t.gradient(current_loss, [model.w, model.b])
  model.w.assign_sub(learning_rate * dw)
  model.b.assign_sub(learning_rate * db)


epochs = range(10)
for epoch in epochs:
  train(model, x, y, learning_rate=0.1)
  print(f"Epoch {epoch:2d}: W={model.w.numpy():1.2f} b={model.b.numpy():1.2f}, "
        f"loss={loss(y, model(x)):2.5f}")
module_w, module_b = float(model.w.numpy()), float(model.b.numpy())


keras_model = tf.keras.Sequential([tf.keras.Input(shape=(1,)), tf.keras.layers.Dense(1)])
keras_model.compile(
    optimizer=tf.keras.optimizers.SGD(learning_rate=0.1),
    loss=tf.keras.losses.MeanSquaredError(),
)
history = keras_model.fit(x[:, tf.newaxis], y, epochs=50, batch_size=1000, verbose=0)
kernel, bias = keras_model.layers[0].get_weights()
keras_w, keras_b = float(kernel[0, 0]), float(bias[0])
print(f"keras: W={keras_w:1.2f} b={keras_b:1.2f}, loss={history.history['loss'][-1]:2.5f}")
