package dev.lease.reactive;

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
 * {@link ReactiveFenceAtGrantReentryTest} on a real MariaDB through r2dbc-mariadb, whose InnoDB lock wait timeout
 * (50 s by default, whole seconds) the fence lowers to the lease's validity for its own statements only.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbReactiveFenceAtGrantReentryTest extends ReactiveFenceAtGrantReentryTest {

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
