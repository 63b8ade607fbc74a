"""The hand drivers' registry: no hardware hand driver exists yet, and asking for one says so."""
import pytest

from drivers.hand import MODELS, HandError, HandTimeout, hand_class, open_hand


def test_no_hardware_hand_is_registered_and_asking_for_one_says_so():
    assert MODELS == {}
    with pytest.raises(ValueError, match=r"hand model must be one of: none yet \(only the "
                                         r"simulated cell's hand exists\); got 'allegro'"):
        open_hand("allegro", "/dev/ttyUSB0")
    with pytest.raises(ValueError, match="got 'leap'"):
        hand_class("leap")


def test_hand_errors_name_the_hand_and_keep_the_builtin_meaning():
    err = HandTimeout("closing not finished within 5 s", hand="can0")
    assert isinstance(err, HandError) and isinstance(err, TimeoutError)
    assert str(err) == "closing not finished within 5 s (hand can0)" and err.hand == "can0"
