import pytest

from server import contract


def test_digest_chain_matches_the_contract_reference_values():
    assert contract.digest_chain(0) == "0" * 64
    assert contract.digest_chain(1) == "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    assert contract.digest_chain(1000) == "36c1cb4f826ae42ceba848227e0c5f786178ca9dceca6772e5d728d09c30a2f6"


def test_int_param_defaults_and_bounds():
    assert contract.int_param({}, "ms") == 10
    assert contract.int_param({}, "kb") == 1
    assert contract.int_param({}, "iters") == 1000
    assert contract.int_param({"ms": "0"}, "ms") == 0
    assert contract.int_param({"ms": "10000"}, "ms") == 10000
    assert contract.int_param({"kb": "10240", "other": "x"}, "kb") == 10240


@pytest.mark.parametrize("raw", ["10001", "-1", "", "1.5", "abc", "1e3", "١٢", "1_0", " 5", "9" * 13])
def test_int_param_rejects_naming_the_parameter(raw):
    with pytest.raises(contract.BadParameter, match=r"^ms must be an integer in 0\.\.=10000$"):
        contract.int_param({"ms": raw}, "ms")


def test_declared_length():
    assert contract.declared_length(None) is None
    assert contract.declared_length("0") == 0
    assert contract.declared_length("67108865") == 67108865
    for bad in ["-1", "12abc", ""]:
        with pytest.raises(ValueError, match="Content-Length"):
            contract.declared_length(bad)


def test_threads_from_status():
    assert contract.threads_from_status("Name:\tpython\nThreads:\t3\nSigQ:\t0/1\n") == 3
    assert contract.threads_from_status("Name:\tpython\n") is None


def test_read_config_defaults_and_errors():
    config = contract.read_config({"PORT": "8081", "TARGET_NAME": "python-fastapi"})
    assert (config.port, config.workers, config.db_pool, config.database_url) == (8081, 1, 16, "")
    assert contract.read_config({"WORKERS": "4", "DB_POOL": "32"}).workers == 4
    with pytest.raises(ValueError, match="WORKERS must be an integer in 1..=256, got 'four'"):
        contract.read_config({"WORKERS": "four"})
    with pytest.raises(ValueError, match="DB_POOL"):
        contract.read_config({"DB_POOL": "0"})
    with pytest.raises(ValueError, match="PORT"):
        contract.read_config({"PORT": "70000"})


def test_listen_addr_defaults_to_loopback_and_refuses_a_name():
    assert contract.read_config({}).listen == "127.0.0.1"
    assert contract.read_config({"LISTEN_ADDR": "127.0.0.2"}).listen == "127.0.0.2"
    assert contract.read_config({"LISTEN_ADDR": "0.0.0.0"}).listen == "0.0.0.0"
    with pytest.raises(ValueError, match="LISTEN_ADDR must be an IP address"):
        contract.read_config({"LISTEN_ADDR": "localhost"})
