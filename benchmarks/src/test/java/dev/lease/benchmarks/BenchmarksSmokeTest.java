package dev.lease.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The only part of the benchmarks that {@code ./mvnw verify} runs: every contender, a handful of times, must
 * produce a result row with a measured value, so the real run cannot rot unnoticed. It asserts nothing about speed.
 */
class BenchmarksSmokeTest {

    @Test
    void everyContenderProducesAResult() throws Exception {
        List<Row> rows = Benchmarks.run(Benchmarks.Settings.smokeRun());
        System.out.println(Report.markdown(rows, Benchmarks.load(), Benchmarks.load(), java.time.Duration.ZERO));

        assertThat(rows).noneMatch(Row::failed);
        assertThat(rows).allSatisfy(row -> assertThat(row.median()).as(row.section() + " / " + row.contender()
                + " / " + row.metric()).isFinite().isGreaterThan(0));
        for (String[] expected : new String[][] {
                {"ZooKeeper: uncontended", "lease LeaseTemplate"}, {"ZooKeeper: uncontended", "lease @Leased"},
                {"ZooKeeper: uncontended", "Curator InterProcessMutex"},
                {"ZooKeeper: uncontended", "Spring Integration ZookeeperLockRegistry"},
                {"ZooKeeper: uncontended", "lease ZooKeeperLeaseBackend alone (no engine)"},
                {"ZooKeeper: uncontended", "plain Curator (floor)"},
                {"ZooKeeper: handover, 8", "lease LeaseTemplate"}, {"ZooKeeper: handover, 8", "plain Curator (floor)"},
                {"Redis: uncontended", "lease LeaseTemplate"}, {"Redis: uncontended", "lease @Leased"},
                {"Redis: uncontended", "Redisson RLock"}, {"Redis: uncontended", "Spring Integration RedisLockRegistry"},
                {"Redis: uncontended", "ShedLock RedisLockProvider"},
                {"JDBC (PostgreSQL): uncontended", "lease LeaseTemplate"},
                {"JDBC (PostgreSQL): uncontended", "lease @Leased"},
                {"JDBC (PostgreSQL): uncontended", "ShedLock JdbcTemplateLockProvider"},
                {"JDBC (PostgreSQL): uncontended", "Spring Integration JdbcLockRegistry"},
                {"ZooKeeper: handover, 8", "Curator InterProcessMutex"}, {"Redis: handover, 8", "Redisson RLock"},
                {"JDBC (PostgreSQL): handover, 8", "lease LeaseTemplate"},
                {"Redlock (3 nodes): uncontended", "lease LeaseTemplate"},
                {"Redlock (3 nodes): uncontended", "Redisson RedissonRedLock"},
                {"Redlock (3 nodes): handover, 8", "lease LeaseTemplate"},
                {"Redlock (3 nodes): handover, 8", "Redisson RedissonRedLock"},
                {"Loss → interrupt", "zookeeper (session expired)"}, {"Loss → interrupt", "redis (key deleted)"},
                {"Loss → interrupt", "jdbc (row taken over)"}, {"Loss → interrupt", "in-memory (lease revoked)"},
                {"Cost of holding", "zookeeper"}, {"Cost of holding", "redis"}, {"Cost of holding", "jdbc"},
                {"Interceptor overhead", "@Leased call (in-memory)"}}) {
            assertThat(rows).as(String.join(" / ", expected))
                    .anyMatch(row -> row.section().startsWith(expected[0]) && row.contender().equals(expected[1]));
        }
        if (!dev.lease.testing.EtcdServer.installed()) {
            return; // the etcd rows need Debian's etcd (.ci/run installs it)
        }
        for (String[] expected : new String[][] {
                {"etcd: uncontended", "lease LeaseTemplate"}, {"etcd: uncontended", "lease @Leased"},
                {"etcd: uncontended", "plain jetcd (floor)"},
                {"etcd: handover, 8", "lease LeaseTemplate"}, {"etcd: handover, 8", "plain jetcd (floor)"},
                {"Cost of holding", "etcd"}, {"Cost of holding", "plain jetcd keepAlive (floor)"}}) {
            assertThat(rows).as(String.join(" / ", expected))
                    .anyMatch(row -> row.section().startsWith(expected[0]) && row.contender().equals(expected[1]));
        }
    }
}
