"""A real Apache HBase on this machine: ``make hbase``, ``make hbase-stop`` and the test run's.

HBase's own jars come from Maven Central through ``hbase/pom.xml`` (``provision``); one JVM runs
the master, a RegionServer and ZooKeeper (standalone mode, data on the local filesystem), a
second JVM the Thrift1 server that happybase speaks to (``runner``). Everything listens on
127.0.0.1 on ports chosen free at start; the info servers are off. docs/hbase.md, "A real HBase
here", has the versions, the memory and the start time.
"""
