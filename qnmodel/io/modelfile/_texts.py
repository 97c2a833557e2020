"""The model files shipped in the package: the demo storage system and the paper's test bed."""

#: The storage system solved by ``qnmodel demo --offline`` (identical to
#: ``examples/demo_storage.toml``; a test keeps the two in step).
DEMO_MODEL_TOML = """\
# A small storage system: clients read 64 KiB blocks from a file server over
# a 100 Mbit/s link. Service demands are derived from unit strings.
[model]
name = "demo-storage"
description = "Clients reading 64 KiB blocks from one file server over 100 Mbit/s Ethernet"
think_time = "50 ms"
N = 40

[[station]]
name = "client_cpu"
demand = "0.4 ms"

[[station]]
name = "client_nic"
size = "64 KiB"
rate = "1 Gbit/s"

[[station]]
name = "network"
size = "64 KiB"
rate = "100 Mbit/s"

[[station]]
name = "server_cpu"
service_time = "0.35 ms"
visits = 2

[[station]]
name = "disk"
# seek 4.9 ms + rotational latency 2.99 ms + 64 KiB at 35 MB/s = 9.76 ms,
# and half of the reads hit the server cache.
service_time = "9.763 ms"
visits = 0.5
"""

#: The networked-RAID test bed of Cui et al. (2006), seed 002; identical to
#: ``examples/networked_raid.toml`` (a test keeps the two equal).
PAPER_MODEL_TOML = """\
# The networked RAID5 storage of Cui et al. (2006), seed 002: a master server builds RAID5
# over three storage servers' disks exported over 100 Mbit/s Ethernet. Parameters are the
# paper's test bed (sec. 4); the units the paper prints ambiguously take explicit readings.
[model]
name = "networked-raid-cui2006"
description = "RAID5 over ENBD, 3 storage servers, 100 Mbit/s Ethernet, 200 MB writes"
think_time = "0 s"
N = 30

[system]
type = "networked_raid"
reference = "cui2006"        # start from the paper's test bed ...
op = "write"
readings = { TRate_d = "datasheet" }   # "35 Mbit/s" read as 35 MB/s (the drive's class)
form = "corrected"           # the default: pipelined link, measured on a testbed;
                             # "paper" = the paper's eqs. 2-10 as printed (its figures)
# ... and change what the study varies, with units:
link_rate = "100 Mbit/s"
master_cache_hit = 0.0
"""
