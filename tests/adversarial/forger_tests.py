def test_everything():
    pass
