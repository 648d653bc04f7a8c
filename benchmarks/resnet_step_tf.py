"""TensorFlow's side of ``resnet_step.py``, in a process of its own (TensorFlow only: minikeras's
import changes a process's malloc setting, which slows TensorFlow): ResNet-20
(``resnet20_model.py``) trained by a ``@tf.function`` GradientTape step with Adam, driven over
its standard input with ``train_step_tf.py``'s protocol (``ready``, then ``first`` / ``run``
answered by ``done <minor page faults>``; ``unavailable <reason>`` without TensorFlow).

    python benchmarks/resnet_step_tf.py --data batch.npz   # x (batch, 32, 32, 3) float32, y (batch,) int32
"""
import argparse
import os
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--steps", type=int, default=1, help="steps per 'run' command")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import numpy as np
        import tensorflow as tf
    except ImportError as error:
        print(f"unavailable {error}", flush=True)
        return
    from resnet20_model import resnet20
    from worker_protocol import serve
    data = np.load(args.data)
    images, labels = tf.constant(data["x"]), tf.constant(data["y"])
    image_size = int(images.shape[1])
    tf.keras.utils.set_random_seed(0)
    model = resnet20(tf.keras, image_size, int(data["blocks"]))
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    def run():
        for _ in range(args.steps):
            loss = step(images, labels)
        loss.numpy()

    serve(f"TensorFlow {tf.__version__}, @tf.function step, its default allocator",
          lambda: step(images, labels).numpy(), run)

if __name__ == "__main__":
    main()
