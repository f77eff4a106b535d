"""The capture-to-profile derivation (tests/fake_nvml/derive.py) on small inputs written for this test (not copies of
the public captures): units, N/A, the clocks-reason bits and the query fields the fake nvidia-smi replays."""

from __future__ import annotations

from tests.fake_nvml import flatten
from tests.fake_nvml.derive import from_exporter, from_xml

XML = """<?xml version="1.0" ?>
<nvidia_smi_log>
  <driver_version>550.54.15</driver_version>
  <cuda_version>12.4</cuda_version>
  <gpu id="00000000:07:00.0">
    <product_name>Tesla T4</product_name>
    <persistence_mode>Enabled</persistence_mode>
    <mig_mode><current_mig>N/A</current_mig><pending_mig>N/A</pending_mig></mig_mode>
    <pci><pci_gpu_link_info>
      <pcie_gen><max_link_gen>3</max_link_gen><current_link_gen>3</current_link_gen></pcie_gen>
      <link_widths><max_link_width>16x</max_link_width><current_link_width>8x</current_link_width></link_widths>
    </pci_gpu_link_info></pci>
    <clocks_event_reasons>
      <clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>
      <clocks_event_reason_hw_slowdown>Active</clocks_event_reason_hw_slowdown>
      <clocks_event_reason_sw_power_cap>Active</clocks_event_reason_sw_power_cap>
    </clocks_event_reasons>
    <fb_memory_usage><total>15360 MiB</total><reserved>388 MiB</reserved><used>2 MiB</used><free>14969 MiB</free></fb_memory_usage>
    <ecc_errors><volatile><dram_uncorrectable>1</dram_uncorrectable></volatile>
      <aggregate><dram_uncorrectable>N/A</dram_uncorrectable></aggregate></ecc_errors>
    <retired_pages>
      <multiple_single_bit_retirement><retired_count>0</retired_count></multiple_single_bit_retirement>
      <double_bit_retirement><retired_count>2</retired_count></double_bit_retirement>
      <pending_retirement>No</pending_retirement>
    </retired_pages>
    <remapped_rows>N/A</remapped_rows>
    <temperature><gpu_temp>40 C</gpu_temp><gpu_temp_slow_threshold>93 C</gpu_temp_slow_threshold></temperature>
    <gpu_power_readings><power_draw>26.78 W</power_draw><enforced_power_limit>70.00 W</enforced_power_limit>
      <default_power_limit>[Insufficient Permissions]</default_power_limit></gpu_power_readings>
    <processes><process_info><pid>42</pid><type>C</type><used_memory>100 MiB</used_memory></process_info></processes>
  </gpu>
</nvidia_smi_log>
"""


def test_from_xml() -> None:
    got = from_xml(XML)
    assert got["system"] == {
        "nvmlSystemGetDriverVersion": "550.54.15",
        "nvmlSystemGetCudaDriverVersion": 12040,
    }
    (d,) = got["devices"]
    assert d["nvmlDeviceGetCudaComputeCapability"] == [7, 5]  # from matrix/gpus.yaml
    assert d["nvmlDeviceGetMemoryInfo"] == {
        "total": 15360 << 20,
        "free": 14969 << 20,
        "used": 2 << 20,
        "reserved": 388 << 20,
    }
    assert d["nvmlDeviceGetMigMode"] == {"error": "NOT_SUPPORTED"}
    assert d["nvmlDeviceGetCurrentClocksEventReasons"] == 0x8 | 0x4
    assert d["nvmlDeviceGetTotalEccErrors:1:0"] == 1
    assert d["nvmlDeviceGetTotalEccErrors:1:1"] == {"error": "NOT_SUPPORTED"}
    assert d["nvmlDeviceGetRetiredPages:1"] == [0x1000, 0x2000] and d["nvmlDeviceGetRetiredPages:0"] == []
    assert d["nvmlDeviceGetRemappedRows"] == {"error": "NOT_SUPPORTED"}
    assert d["nvmlDeviceGetPowerUsage"] == 26780
    assert d["nvmlDeviceGetPowerManagementDefaultLimit"] == {"error": "NO_PERMISSION"}
    assert d["nvmlDeviceGetCurrPcieLinkWidth"] == 8 and d["nvmlDeviceGetMaxPcieLinkWidth"] == 16
    assert d["nvmlDeviceGetComputeRunningProcesses"] == [{"pid": 42, "used_memory": 100 << 20}]
    assert d["nvmlDeviceGetUUID"] == "GPU-00000000-0000-0000-0000-000000000000"
    assert got["smi"][0]["memory.total"] == "15360 MiB" and got["smi"][0]["pci.bus_id"] == "00000000:07:00.0"
    flatten({"schema_version": 1, **got})  # the fake can serve it


EXPORTER = """################################################################################
# idle :: query (-q)
# $ nvidia-smi -q
################################################################################
Driver Version                            : 590.48.01
CUDA Version                              : 13.1

################################################################################
# idle :: query-gpu (csv, what the exporter parses)
# $ nvidia-smi --query-gpu=... --format=csv
################################################################################
driver_version, name, uuid, pci.bus_id, compute_cap, memory.total [MiB], memory.used [MiB], memory.free [MiB], clocks_event_reasons.active, mig.mode.current, mig.mode.pending, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure, retired_pages.double_bit.count, temperature.gpu
590.48.01, NVIDIA H100 80GB HBM3, GPU-x, 00000000:00:09.0, 9.0, 81559 MiB, 0 MiB, 81081 MiB, 0x0000000000000041, Enabled, Disabled, 0, 1, Yes, No, [N/A], 41

################################################################################
"""


def test_from_exporter() -> None:
    got = from_exporter(EXPORTER)
    assert got["system"] == {
        "nvmlSystemGetDriverVersion": "590.48.01",
        "nvmlSystemGetCudaDriverVersion": 13010,
    }
    (d,) = got["devices"]
    assert d["nvmlDeviceGetCudaComputeCapability"] == [9, 0]
    assert d["nvmlDeviceGetCurrentClocksEventReasons"] == 0x41
    assert d["nvmlDeviceGetMigMode"] == [1, 0]
    assert d["nvmlDeviceGetRemappedRows"] == [0, 1, 1, 0]
    assert d["nvmlDeviceGetRetiredPages:1"] == {"error": "NOT_SUPPORTED"}
    assert d["nvmlDeviceGetTemperature:0"] == 41
    assert got["smi"][0]["compute_cap"] == "9.0" and got["smi"][0]["uuid"].startswith("GPU-00000000")
