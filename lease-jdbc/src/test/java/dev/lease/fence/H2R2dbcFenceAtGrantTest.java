package dev.lease.fence;

import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.h2.H2ConnectionOption;
import io.r2dbc.spi.ConnectionFactory;

/** {@link R2dbcFenceAtGrantTest} on H2 through r2dbc-h2, whose own lock timeout ended a wait at its own bound. */
class H2R2dbcFenceAtGrantTest extends R2dbcFenceAtGrantTest {

    private static final ConnectionFactory H2 = new H2ConnectionFactory(H2ConnectionConfiguration.builder()
            .inMemory("r2dbc-fence-at-grant").property(H2ConnectionOption.DB_CLOSE_DELAY, "-1").build());

    @Override
    protected ConnectionFactory connectionFactory() {
        return H2;
    }
}
