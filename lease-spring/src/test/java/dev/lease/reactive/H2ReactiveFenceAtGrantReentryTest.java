package dev.lease.reactive;

import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.h2.H2ConnectionOption;
import io.r2dbc.spi.ConnectionFactory;

/**
 * {@link ReactiveFenceAtGrantReentryTest} on H2 through r2dbc-h2, whose own lock timeout ended the self-deadlock and
 * then cost the section its valid lease.
 */
class H2ReactiveFenceAtGrantReentryTest extends ReactiveFenceAtGrantReentryTest {

    private static final ConnectionFactory H2 = new H2ConnectionFactory(H2ConnectionConfiguration.builder()
            .inMemory("reactive-fence-at-grant-reentry").property(H2ConnectionOption.DB_CLOSE_DELAY, "-1").build());

    @Override
    protected ConnectionFactory connectionFactory() {
        return H2;
    }
}
