package dev.lease.autoconfigure.leader;

import static dev.lease.testing.TestTiming.seconds;

import java.time.Duration;
import java.util.List;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import dev.lease.testing.TcpProxy;

class ZooKeeperLeaderElectionEndToEndTest extends LeaderElectionEndToEndTest {

    private static TestingServer server;

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @Override
    protected List<String> properties(TcpProxy link, Duration ttl) {
        // A ZooKeeper lease lives as long as the session: the session timeout bounds the ttl.
        return List.of("lease.backend=zookeeper", "lease.zookeeper.connect-string=" + link.address(),
                "lease.zookeeper.session-timeout=" + ttl.toMillis() + "ms",
                "lease.zookeeper.connection-timeout=" + seconds(4).toMillis() + "ms",
                "lease.default-ttl=" + ttl.toMillis() + "ms");
    }

    @Override
    protected void register(AnnotationConfigApplicationContext context, TcpProxy link) {
    }

    @Override
    protected int storePort() {
        return server.getPort();
    }

    @Override
    protected Duration shortTtl() {
        return seconds(4);
    }
}
