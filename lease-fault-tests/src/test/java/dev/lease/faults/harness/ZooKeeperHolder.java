package dev.lease.faults.harness;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.mutants.Mutant;
import dev.lease.spi.GrantFence;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.TestTiming;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/** An in-process "application instance" on ZooKeeper: its own client (session), backend and engine. */
public record ZooKeeperHolder(CuratorFramework client, ZooKeeperLeaseBackend backend, LeaseEngine engine)
        implements AutoCloseable {

    public static final String ROOT = "/fault-leases";

    public static ZooKeeperHolder connect(String connectString, Duration sessionTimeout) throws InterruptedException {
        return connect(connectString, sessionTimeout, null);
    }

    /** @param grantFence the fence the engine advances at grant for leases that name one, or null */
    public static ZooKeeperHolder connect(String connectString, Duration sessionTimeout, GrantFence grantFence)
            throws InterruptedException {
        return connect(CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs((int) sessionTimeout.toMillis()).connectionTimeoutMs((int) sessionTimeout.toMillis())
                .retryPolicy(new ExponentialBackoffRetry(100, 3)), connectString, sessionTimeout, grantFence);
    }

    /**
     * With a client set up like the auto-configuration's: a connection timeout of a third of the session timeout and
     * retries that go on for longer than it (Curator retries a request across a session expiry).
     */
    public static ZooKeeperHolder connectLikeProduction(String connectString, Duration sessionTimeout)
            throws InterruptedException {
        return connect(CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs((int) sessionTimeout.toMillis())
                .connectionTimeoutMs((int) sessionTimeout.dividedBy(3).toMillis())
                .retryPolicy(new ExponentialBackoffRetry(100, 10, 2000)), connectString, sessionTimeout, null);
    }

    private static ZooKeeperHolder connect(CuratorFrameworkFactory.Builder builder, String connectString,
            Duration sessionTimeout, GrantFence grantFence) throws InterruptedException {
        CuratorFramework client = builder.build();
        client.start();
        if (!client.blockUntilConnected((int) TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS)) {
            client.close();
            throw new IllegalStateException("could not connect to ZooKeeper at " + connectString);
        }
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(client, ROOT, sessionTimeout);
        return new ZooKeeperHolder(client, backend, engine(backend, LeaseKind.CORRECTNESS, grantFence));
    }

    public static LeaseEngine engine(LeaseBackend<?> backend, LeaseKind kind) {
        return engine(backend, kind, null);
    }

    public static LeaseEngine engine(LeaseBackend<?> backend, LeaseKind kind, GrantFence grantFence) {
        return Mutant.engine(backend, kind, grantFence);
    }

    @Override
    public void close() {
        engine.close();
        backend.close();
        client.close();
    }
}
