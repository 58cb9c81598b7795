package dev.lease.fence;

import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;

import dev.lease.testing.MariaDbServer;

/**
 * {@link R2dbcFenceAtGrantTest} on a real MariaDB through r2dbc-mariadb: InnoDB waits 50 s for a row lock by default,
 * in whole seconds; the fence lowers it to the validity for its own statements only.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbR2dbcFenceAtGrantTest extends R2dbcFenceAtGrantTest {

    private static MariaDbServer mariadb;
    private static ConnectionFactory connections;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("fences");
        connections = connectionFactory(mariadb.port(), "fences");
    }

    /** Root without a password, as {@link MariaDbServer} installs it. */
    static ConnectionFactory connectionFactory(int port, String database) {
        return new MariadbConnectionFactory(MariadbConnectionConfiguration.builder().host("127.0.0.1").port(port)
                .username("root").database(database).build());
    }

    @AfterAll
    static void stopMariaDb() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    protected ConnectionFactory connectionFactory() {
        return connections;
    }
}
