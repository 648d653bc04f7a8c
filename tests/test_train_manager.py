"""mk.train.CheckpointManager and latest_checkpoint: numbering, max_to_keep, the 'checkpoint'
state file in TF's text format, and picking up a directory's checkpoints after a restart."""
import os

import pytest

import minikeras as mk


def test_manager_keeps_the_newest(tmp_path):
    step = mk.Variable(0)
    ckpt = mk.train.Checkpoint(step=step)
    manager = mk.train.CheckpointManager(ckpt, str(tmp_path / "ckpts"), max_to_keep=2)
    assert manager.latest_checkpoint is None and ckpt.restore(manager.latest_checkpoint) is not None
    paths = []
    for i in range(3):
        step.assign(i)
        paths.append(manager.save())
    directory = str(tmp_path / "ckpts")
    assert paths == [os.path.join(directory, f"ckpt-{n}") for n in (1, 2, 3)]
    assert manager.checkpoints == paths[1:]
    assert sorted(os.listdir(directory)) == ["checkpoint", "ckpt-2.h5", "ckpt-3.h5"]
    # TF's text format, paths relative to the directory
    assert open(os.path.join(directory, "checkpoint")).read() == (
        'model_checkpoint_path: "ckpt-3"\nall_model_checkpoint_paths: "ckpt-2"\n'
        'all_model_checkpoint_paths: "ckpt-3"\n')
    assert mk.train.latest_checkpoint(directory) == paths[2]

    restarted = mk.train.CheckpointManager(mk.train.Checkpoint(step=mk.Variable(0)), directory, max_to_keep=2)
    assert restarted.checkpoints == paths[1:]
    step2 = mk.Variable(-1)
    mk.train.Checkpoint(step=step2).restore(restarted.latest_checkpoint).expect_partial()
    assert int(step2.numpy()) == 2


def test_checkpoint_number_and_step_counter(tmp_path):
    step = mk.Variable(40)
    manager = mk.train.CheckpointManager(mk.train.Checkpoint(step=step), str(tmp_path), max_to_keep=None,
                                         step_counter=step)
    assert manager.save().endswith("ckpt-40")
    assert manager.save(checkpoint_number=7).endswith("ckpt-7")
    assert len(manager.checkpoints) == 2


def test_latest_checkpoint_of_missing_or_emptied_directory(tmp_path):
    assert mk.train.latest_checkpoint(str(tmp_path / "nowhere")) is None
    path = mk.train.Checkpoint(v=mk.Variable(1.0)).save(str(tmp_path / "p"))
    os.remove(path + ".h5")
    assert mk.train.latest_checkpoint(str(tmp_path)) is None


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="max_to_keep must be None or a positive integer"):
        mk.train.CheckpointManager(mk.train.Checkpoint(), str(tmp_path), max_to_keep=0)
    with pytest.raises(TypeError, match="expects an mk.train.Checkpoint"):
        mk.train.CheckpointManager(object(), str(tmp_path), max_to_keep=1)
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        mk.train.list_variables(str(tmp_path))
