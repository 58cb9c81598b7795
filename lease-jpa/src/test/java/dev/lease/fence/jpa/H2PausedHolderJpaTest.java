package dev.lease.fence.jpa;

import java.net.ServerSocket;

import org.h2.tools.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link PausedHolderJpaTest} on H2, served over TCP so that both JVMs share one in-memory database. */
class H2PausedHolderJpaTest extends PausedHolderJpaTest {

    private static Server h2;

    @BeforeAll
    static void startH2() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        h2 = Server.createTcpServer("-tcpPort", String.valueOf(port), "-ifNotExists").start();
    }

    @AfterAll
    static void stopH2() {
        if (h2 != null) {
            h2.stop();
        }
    }

    @Override
    String jdbcUrl() {
        return "jdbc:h2:tcp://localhost:" + h2.getPort() + "/mem:paused;DB_CLOSE_DELAY=-1";
    }
}
