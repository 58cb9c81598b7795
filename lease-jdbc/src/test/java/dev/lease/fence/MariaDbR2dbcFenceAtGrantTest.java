package dev.lease.fence;

import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;

import dev.lease.testing.MariaDbDatabase;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.SharedDatabase;

/**
 * {@link R2dbcFenceAtGrantTest} on a real MariaDB through r2dbc-mariadb: InnoDB waits 50 s for a row lock by default,
 * in whole seconds; the fence lowers it to the validity for its own statements only.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbR2dbcFenceAtGrantTest extends R2dbcFenceAtGrantTest {

    @RegisterExtension
    static final SharedDatabase<MariaDbDatabase> MARIADB = SharedDatabase.mariadb();

    private static ConnectionFactory connections;

    @BeforeAll
    static void connect() {
        // Root without a password, as MariaDbServer installs it.
        connections = new MariadbConnectionFactory(MariadbConnectionConfiguration.builder().host("127.0.0.1")
                .port(MARIADB.get().port()).username("root").database(MARIADB.get().name()).build());
    }

    @Override
    protected ConnectionFactory connectionFactory() {
        return connections;
    }
}
