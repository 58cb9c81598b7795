package dev.lease.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.time.Instant;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import dev.lease.spi.Grant;
import dev.lease.sql.SqlDialect;
import dev.lease.testing.MariaDbServer;
import dev.lease.testing.TcpProxy;

/**
 * The JDBC backend on a real MariaDB server (the MySQL scripts and dialect). The second application instance's
 * driver counts changed rows rather than matched ones ({@code useAffectedRows=true}), so the whole suite runs with
 * both settings. Also what only MariaDB/MySQL can get wrong: session time zones with daylight saving time.
 */
@EnabledIf(value = MariaDbServer.INSTALLED, disabledReason = MariaDbServer.NOT_INSTALLED)
class MariaDbJdbcLeaseBackendContractTest extends JdbcLeaseBackendContractTest {

    private static MariaDbServer mariadb;
    private static boolean parisLoaded;
    private static DataSource first;
    private static DataSource second;

    @BeforeAll
    static void startMariaDb() throws Exception {
        mariadb = MariaDbServer.start("leases");
        parisLoaded = mariadb.loadTimeZone("Europe/Paris");
        first = mariadb.dataSource();
        second = mariadb.dataSource("useAffectedRows=true");
        new JdbcLeaseBackend(first).createSchema();
    }

    @AfterAll
    static void stopMariaDb() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    protected DataSource dataSource() {
        return first;
    }

    @Override
    protected DataSource secondDataSource() {
        return second;
    }

    @Override
    protected String table() {
        return JdbcLeaseBackend.DEFAULT_TABLE;
    }

    @Override
    protected SqlDialect dialect() {
        return SqlDialect.MYSQL;
    }

    @Override
    protected int serverPort() {
        return mariadb.port();
    }

    @Override
    protected SingleConnectionDataSource through(TcpProxy proxy) {
        return new SingleConnectionDataSource(mariadb.jdbcUrl(proxy.port()), true);
    }

    @Test
    void instancesWhoseSessionsRunInDifferentTimeZonesAgreeOnExpiry() throws Exception {
        // 25 hours apart, MariaDB's widest offsets: expiry judged on session-local times would make the western
        // holder's lease a day old in the east.
        JdbcLeaseBackend west = new JdbcLeaseBackend(inZone("-12:00", ""));
        JdbcLeaseBackend east = new JdbcLeaseBackend(inZone("+13:00", ""));
        String name = uniqueName();
        var held = grant(west, name, seconds(30)).orElseThrow();
        assertThat(grant(east, name, seconds(30))).as("taken from another time zone").isEmpty();
        assertThat(west.renew(held)).isTrue();
        west.release(held);
        var next = grant(east, name, seconds(30)).orElseThrow();
        assertThat(next.token().getAsLong()).isGreaterThan(held.token().getAsLong());
        east.release(next);
    }

    /**
     * Europe/Paris repeats 02:00-03:00 on 2025-10-26 and skips it on 2025-03-30. Each step runs on sessions whose
     * database clock is frozen at a chosen instant ({@code SET timestamp}), one in the holder's time zone, one in
     * another's: the lease lasts exactly its ttl from the last grant or renewal, for both.
     */
    @ParameterizedTest(name = "granted at {0} in {1}, seen from {2}")
    @CsvSource({
        "2025-10-26T00:40:00Z, Europe/Paris, +00:00", // renewal ends in the repeated hour's second pass
        "2025-10-26T00:40:00Z, +00:00, Europe/Paris",
        "2025-10-26T01:10:00Z, Europe/Paris, +00:00", // granted in the repeated hour's second pass
        "2025-10-26T01:10:00Z, +00:00, Europe/Paris",
        "2025-03-30T00:20:00Z, Europe/Paris, -05:00", // expires in the skipped hour
        "2025-03-30T00:20:00Z, -05:00, Europe/Paris",
    })
    void aLeaseLastsItsTtlAcrossADaylightSavingChangeInEveryTimeZone(Instant grantedAt, String holderZone,
            String otherZone) throws Exception {
        assumeTrue(parisLoaded, "Europe/Paris could not be loaded into MariaDB: apt-get install -y tzdata");
        Duration ttl = Duration.ofMinutes(30);
        Instant renewedAt = grantedAt.plus(ttl.dividedBy(2));
        Instant expiresAt = renewedAt.plus(ttl);
        String name = uniqueName() + "-" + grantedAt.getEpochSecond() + holderZone;

        var held = grant(at(grantedAt, holderZone), name, ttl).orElseThrow();
        assertThat(grant(at(grantedAt.plusSeconds(1), otherZone), name, ttl)).as("taken right after the grant").isEmpty();
        assertThat(at(renewedAt, holderZone).renew(held)).as("renewed halfway").isTrue();

        Instant justBefore = expiresAt.minusMillis(1);
        assertThat(grant(at(justBefore, otherZone), name, ttl)).as("taken from %s before expiry", otherZone).isEmpty();
        assertThat(grant(at(justBefore, holderZone), name, ttl)).as("taken from %s before expiry", holderZone)
                .isEmpty();

        var next = grant(at(expiresAt, otherZone), name, ttl).orElseThrow(
                () -> new AssertionError("not expired for " + otherZone + " at " + expiresAt));
        assertThat(next.token().getAsLong()).isGreaterThan(held.token().getAsLong());
        assertThat(at(expiresAt, holderZone).renew(held)).as("expired holder renews").isFalse();
    }

    /**
     * A renewal in the same database microsecond as the grant sets the same {@code expires_at}: with
     * {@code useAffectedRows=true} the UPDATE changed nothing and reports 0 rows, yet the lease is still held.
     */
    @Test
    void aRenewalThatChangesNoValueStillRenews() throws Exception {
        Instant frozen = Instant.now();
        JdbcLeaseBackend backend = new JdbcLeaseBackend(mariadb.dataSource("useAffectedRows=true",
                "sessionVariables=timestamp=" + micros(frozen)));
        String name = uniqueName();
        var held = grant(backend, name, seconds(30)).orElseThrow();
        assertThat(backend.renew(held)).as("renewed at the grant's instant").isTrue();
        assertThat(backend.renew(held)).as("renewed again").isTrue();
        backend.release(held);
        assertThat(grant(secondBackend(), name, seconds(30))).as("free after release").isPresent();
    }

    /** As above for a batch: the short update count sends the batch to its lookup, which finds every grant held. */
    @Test
    void aBatchRenewalThatChangesNoValueStillRenewsEveryGrant() throws Exception {
        Instant frozen = Instant.now();
        JdbcLeaseBackend backend = new JdbcLeaseBackend(mariadb.dataSource("useAffectedRows=true",
                "sessionVariables=timestamp=" + micros(frozen)));
        var first = grant(backend, uniqueName() + "-1", seconds(30)).orElseThrow();
        var second = grant(backend, uniqueName() + "-2", seconds(30)).orElseThrow();
        assertThat(backend.renewAll(java.util.List.of(first, second))).as("lost at the grants' instant").isEmpty();
        backend.release(first);
        backend.release(second);
    }

    /** A table made by the former script: a TIMESTAMP expires_at is converted through the session time zone. */
    @Test
    void aTableWhoseExpiryIsATimestampColumnIsRefusedWithTheFix() {
        JdbcTemplate jdbc = new JdbcTemplate(first);
        jdbc.execute("CREATE TABLE old_lease_lock (name VARCHAR(255) NOT NULL PRIMARY KEY, owner VARCHAR(64) NULL, "
                + "token BIGINT NOT NULL, expires_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))");
        JdbcLeaseBackend old = new JdbcLeaseBackend(first, "old_lease_lock");
        assertThatThrownBy(old::verifySchema).isInstanceOf(DataAccessException.class)
                .hasMessageContaining("old_lease_lock.expires_at is a TIMESTAMP")
                .hasMessageContaining("ALTER TABLE old_lease_lock MODIFY expires_at DATETIME(6) NOT NULL");

        jdbc.execute("ALTER TABLE old_lease_lock MODIFY expires_at DATETIME(6) NOT NULL");
        old.verifySchema();
    }

    /** A backend whose sessions run in {@code zone} with the database clock frozen at {@code instant}. */
    private static JdbcLeaseBackend at(Instant instant, String zone) {
        DataSource session = inZone(zone, ",timestamp=" + micros(instant));
        assertThat(new JdbcTemplate(session).queryForObject("SELECT @@session.timestamp", Double.class))
                .as("frozen database clock").isCloseTo(instant.toEpochMilli() / 1000.0, within(0.001));
        return new JdbcLeaseBackend(session);
    }

    /** Connections whose session time zone is {@code zone}, with more session variables after it. */
    private static DataSource inZone(String zone, String moreVariables) {
        DataSource session = mariadb.dataSource("sessionVariables=time_zone='" + zone + "'" + moreVariables);
        assertThat(new JdbcTemplate(session).queryForObject("SELECT @@session.time_zone", String.class))
                .as("session time zone").isEqualTo(zone);
        return session;
    }

    private static String micros(Instant instant) {
        return instant.getEpochSecond() + "." + String.format("%06d", instant.getNano() / 1000);
    }
}
