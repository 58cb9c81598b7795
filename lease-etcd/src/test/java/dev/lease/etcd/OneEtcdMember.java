package dev.lease.etcd;

import static dev.lease.etcd.EtcdTesting.bytes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

import dev.lease.testing.EtcdServer;
import dev.lease.testing.TestTiming;

/**
 * Tests on one real etcd member (Debian's binary) shared by the class, an admin client that plays someone else, and
 * backends on clients of their own, closed after each test.
 */
abstract class OneEtcdMember {

    static EtcdServer etcd;
    static Client admin;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    static void startEtcd() throws Exception {
        etcd = EtcdServer.start(1);
        admin = EtcdTesting.client(etcd.endpoints());
        // The first jetcd call of a JVM loads Vert.x, Netty and gRPC: seconds on a loaded machine, not the tests' time.
        admin.getKVClient().get(bytes("/warm-up")).get(60, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            admin.close();
            etcd.close();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        closeables.clear();
    }

    /** Closed after the test, in the reverse order of opening. */
    <T extends AutoCloseable> T closeAfter(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    /** A backend on a client of its own, waiting 5 s (scaled) for etcd. */
    EtcdLeaseBackend backend(String endpoints, String prefix) {
        return backend(endpoints, prefix, TestTiming.seconds(5));
    }

    /** A backend on a client of its own. */
    EtcdLeaseBackend backend(String endpoints, String prefix, Duration callTimeout) {
        Client client = closeAfter(EtcdTesting.client(endpoints));
        return closeAfter(new EtcdLeaseBackend(client, prefix, callTimeout));
    }
}
