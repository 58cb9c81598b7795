package dev.lease.fence;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/**
 * {@link FenceAtGrantReentryTest} on a real PostgreSQL server, which has no lock timeout by default and cannot see a
 * wait between two of its sessions that one thread holds: the self-deadlock there lasted for ever.
 */
class PostgresFenceAtGrantReentryTest extends FenceAtGrantReentryTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    @BeforeAll
    static void createTables() {
        createTables(POSTGRES.get().dataSource());
    }

    @Override
    protected DataSource dataSource() {
        return POSTGRES.get().dataSource();
    }
}
