package dev.lease.fence;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import dev.lease.FencingToken;

/** The reset statement a far-ahead fence suggests; that it runs is shown against real databases in JdbcFenceTest. */
class StaleTokenExceptionTest {

    @Test
    void numbersStayNumbersAndEverythingElseBecomesAQuotedLiteral() {
        assertThat(StaleTokenException.resetStatement("t", "fence", "id", 42L))
                .isEqualTo("UPDATE t SET fence = 0 WHERE id = 42");
        assertThat(StaleTokenException.resetStatement("t", "fence", "id", new BigDecimal("1E+3")))
                .endsWith("WHERE id = 1000");
        UUID uuid = UUID.randomUUID();
        assertThat(StaleTokenException.resetStatement("t", "f", "id", uuid))
                .isEqualTo("UPDATE t SET f = 0 WHERE id = '" + uuid + "'");
        assertThat(StaleTokenException.resetStatement("t", "fence", "code", "it's")).endsWith("WHERE code = 'it''s'");
    }

    /** MySQL reads a backslash in a literal as an escape, PostgreSQL and H2 as itself: no literal fits all three. */
    @Test
    void aTextWithABackslashGetsABindMarkerAndTheValueBeside() {
        assertThat(new StaleTokenException("C:\\jobs", new FencingToken("import", 2), 500).getMessage())
                .endsWith("reset it: UPDATE lease_fence SET fence = 0 WHERE resource = ? (bind resource = C:\\jobs)");
    }

    /** Resources and keys often come from request data: none may forge a log line through the message. */
    @Test
    void hostileCharactersInResourcesLeasesAndKeysAreEscaped() {
        String hostile = "invoice-1\r\nWARN forged \u202Egnp";
        StaleTokenException refused = new StaleTokenException(hostile, new FencingToken(hostile, 2), 5);
        assertThat(refused.getMessage()).doesNotContain("\r", "\n", "\u202E").contains("invoice-1\\u000D\\u000AWARN");
        assertThat(refused.resource()).as("the value itself is kept").isEqualTo(hostile);
        assertThat(StaleTokenException.resetStatement("t", "fence", "code", hostile))
                .isEqualTo("UPDATE t SET fence = 0 WHERE code = ? (bind code = invoice-1\\u000D\\u000AWARN forged \\u202Egnp)");
    }

    @Test
    void resourcesThatWouldPrintAsSomethingElseAreRefusedWithAnEscapedMessage() {
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> JdbcFence.validateResource("invoice-\u202E24"))
                .satisfies(ex -> assertThat(ex.getMessage()).doesNotContain("\u202E").contains("invoice-\\u202E24"));
    }
}
