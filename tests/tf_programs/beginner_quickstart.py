"""TensorFlow 2 quickstart for beginners (tensorflow.org/tutorials/quickstart/beginner), with the
training set cut to 6,000 images and one epoch so that it runs in seconds. With TensorFlow's imports in
place of minikeras's it runs on TensorFlow 2.21; ``tests/test_import_as_tf.py`` runs it with minikeras."""
import minikeras as tf

print("TensorFlow version:", tf.__version__)

mnist = tf.keras.datasets.mnist

(x_train, y_train), (x_test, y_test) = mnist.load_data()
x_train, x_test = x_train / 255.0, x_test / 255.0
x_train, y_train = x_train[:6000], y_train[:6000]

model = tf.keras.models.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28)),
    tf.keras.layers.Dense(128, activation='relu'),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(10)
])

predictions = model(x_train[:1]).numpy()
print(predictions)
print(tf.nn.softmax(predictions).numpy())

loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
initial_loss = loss_fn(y_train[:1], predictions).numpy()
print(initial_loss)

model.compile(optimizer='adam',
              loss=loss_fn,
              metrics=['accuracy'])
model.fit(x_train, y_train, epochs=1, verbose=2)
test_loss, test_accuracy = model.evaluate(x_test, y_test, verbose=2)

probability_model = tf.keras.Sequential([
    model,
    tf.keras.layers.Softmax()
])
probabilities = probability_model(x_test[:5])
print(probabilities)
