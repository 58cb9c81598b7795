package dev.lease.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.core.ParameterNameDiscoverer;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.LeaseConfigurationException;

/**
 * What the parser can only be shown with a compiler setting the build does not use (no parameter names), and the
 * duration syntax it shares with Spring Boot's {@code lease.*} properties.
 */
class LeasedMethodParserTest {

    /** As for classes compiled without {@code -parameters}. */
    private static final ParameterNameDiscoverer NO_NAMES = new ParameterNameDiscoverer() {
        @Override
        public String[] getParameterNames(Method method) {
            return null;
        }

        @Override
        public String[] getParameterNames(Constructor<?> ctor) {
            return null;
        }
    };

    private final LeasedMethodParser parser = new LeasedMethodParser(value -> value, NO_NAMES);

    @Test
    void withoutParameterNamesANameReferenceIsRefusedWithTheFix() throws Exception {
        Method bill = Invoices.class.getMethod("byName", long.class);
        assertThatThrownBy(() -> parser.parse(bill, bill.getAnnotation(Leased.class), false))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageStartingWith("@Leased on Invoices.byName(long) (lease 'invoice-#{#invoiceId}')")
                .hasMessageContaining("#invoiceId").hasMessageContaining("-parameters").hasMessageContaining("#p0");
    }

    @Test
    void withoutParameterNamesPositionsStillWork() throws Exception {
        Method bill = Invoices.class.getMethod("byPosition", long.class);
        assertThat(parser.parse(bill, bill.getAnnotation(Leased.class), false).describeName())
                .isEqualTo("'invoice-#{#p0}-#{#a0}'");
    }

    /** Spring's duration syntax, which Spring Boot's lease.* properties share: a unit suffix (ms by default) or ISO-8601. */
    @Test
    void durationsAreWrittenAsPropertiesWriteThem() throws Exception {
        assertThat(parser.parse(Durations.class.getMethod("simple"), Durations.class.getMethod("simple")
                .getAnnotation(Leased.class), false)).satisfies(parsed -> {
                    assertThat(parsed.ttl()).isEqualTo(Duration.ofSeconds(30));
                    assertThat(parsed.renewEvery()).isEqualTo(Duration.ofMillis(500));
                    assertThat(parsed.waitFor()).isEqualTo(Duration.ofMinutes(2));
                });
        assertThat(parser.parse(Durations.class.getMethod("iso"), Durations.class.getMethod("iso")
                .getAnnotation(Leased.class), false)).satisfies(parsed -> {
                    assertThat(parsed.ttl()).isEqualTo(Duration.ofDays(1));
                    assertThat(parsed.renewEvery()).isEqualTo(Duration.ofSeconds(30));
                    assertThat(parsed.waitFor()).isEqualTo(Duration.ZERO);
                });
        Method spaced = Durations.class.getMethod("spaced");
        assertThatThrownBy(() -> parser.parse(spaced, spaced.getAnnotation(Leased.class), false))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("ttl = \"30 s\" is not a duration").hasMessageContaining("\"30s\"");
        Method fraction = Durations.class.getMethod("fraction");
        assertThatThrownBy(() -> parser.parse(fraction, fraction.getAnnotation(Leased.class), false))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("renewEvery = \"1.5s\" is not a duration");
    }

    static class Durations {
        @Leased(name = "simple", kind = LeaseKind.EFFICIENCY, ttl = "30s", renewEvery = "500", waitFor = "2M")
        public void simple() {
        }

        @Leased(name = "iso", kind = LeaseKind.EFFICIENCY, ttl = "1d", renewEvery = "PT30S", waitFor = "0s")
        public void iso() {
        }

        @Leased(name = "spaced", kind = LeaseKind.EFFICIENCY, ttl = "30 s")
        public void spaced() {
        }

        @Leased(name = "fraction", kind = LeaseKind.EFFICIENCY, renewEvery = "1.5s")
        public void fraction() {
        }
    }

    @Test
    void durationsAreReadAsBootReadsPropertiesAndTheCompositeStyleIsRefused() throws Exception {
        Method method = Invoices.class.getMethod("byPosition", long.class);
        LeasedMethodParser resolving = new LeasedMethodParser(value -> switch (value) {
            case "${ttl}" -> "PT45S";
            case "${wait}" -> "1h30m";
            default -> value;
        }, NO_NAMES);
        Leased leased = method.getAnnotation(Leased.class);
        for (String[] ttl : new String[][] {{"30s", "PT30S"}, {"30S", "PT30S"}, {"500", "PT0.5S"}, {"2m", "PT2M"},
                {"1d", "PT24H"}, {"pt30s", "PT30S"}, {"${ttl}", "PT45S"}}) {
            assertThat(resolving.parse(method, withTtl(leased, ttl[0]), false).ttl()).as(ttl[0])
                    .hasToString(ttl[1]);
        }
        for (String bad : new String[] {"1h30m", "30 s", "1.5s", "thirty", "${wait}"}) {
            assertThatThrownBy(() -> resolving.parse(method, withTtl(leased, bad), false)).as(bad)
                    .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("ttl = \"" + bad + "\"")
                    .hasMessageContaining("is not a duration").hasMessageContaining("\"30s\", \"500ms\"");
        }
    }

    /**
     * holdAtLeast is read like the ttl (placeholders, the same syntax) and checked as the application starts: bad
     * syntax or a negative hold names the method, the attribute and the fix; zero or empty means none.
     */
    @Test
    void holdAtLeastIsReadLikeTheTtlAndANegativeOrMalformedOneNamesTheMethodAndTheFix() throws Exception {
        Method method = Invoices.class.getMethod("byPosition", long.class);
        LeasedMethodParser resolving = new LeasedMethodParser(value -> switch (value) {
            case "${hold}" -> "4s";
            case "${negative}" -> "-1s";
            default -> value;
        }, NO_NAMES);
        Leased leased = method.getAnnotation(Leased.class);
        for (String[] hold : new String[][] {{"4s", "PT4S"}, {"PT0.5S", "PT0.5S"}, {"${hold}", "PT4S"}, {"0s", "PT0S"},
                {"", "PT0S"}}) {
            LeasedMethod parsed = resolving.parse(method, with(leased, "holdAtLeast", hold[0]), false);
            assertThat(parsed.holdAtLeast()).as(hold[0]).hasToString(hold[1]);
            assertThat(parsed.spec("invoice-1", null).holdAtLeast()).as(hold[0]).hasToString(hold[1]);
        }
        assertThatThrownBy(() -> resolving.parse(method, with(leased, "holdAtLeast", "four seconds"), false))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageStartingWith("@Leased on Invoices.byPosition(long)")
                .hasMessageContaining("holdAtLeast = \"four seconds\" is not a duration").hasMessageContaining("\"30s\"");
        for (String negative : new String[] {"-1s", "${negative}"}) {
            assertThatThrownBy(() -> resolving.parse(method, with(leased, "holdAtLeast", negative), false))
                    .as(negative).isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageStartingWith("@Leased on Invoices.byPosition(long)")
                    .hasMessageContaining("holdAtLeast = \"" + negative + "\"").hasMessageContaining("is negative")
                    .hasMessageContaining("leave holdAtLeast out for none");
        }
    }

    /** {@code leased} with another ttl. */
    private static Leased withTtl(Leased leased, String ttl) {
        return with(leased, "ttl", ttl);
    }

    /** {@code leased} with another value of one attribute. */
    private static Leased with(Leased leased, String attribute, String value) {
        return (Leased) java.lang.reflect.Proxy.newProxyInstance(Leased.class.getClassLoader(),
                new Class<?>[] {Leased.class}, (proxy, m, args) -> m.getName().equals(attribute) ? value
                        : m.invoke(leased, args));
    }

    static class Invoices {
        @Leased(name = "invoice-#{#invoiceId}", kind = LeaseKind.CORRECTNESS)
        public void byName(long invoiceId) {
        }

        @Leased(name = "invoice-#{#p0}-#{#a0}", kind = LeaseKind.CORRECTNESS)
        public void byPosition(long invoiceId) {
        }
    }
}
