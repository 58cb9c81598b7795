package dev.lease.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;

import org.junit.jupiter.api.Test;
import org.springframework.core.ParameterNameDiscoverer;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.LeaseConfigurationException;

/** What the parser can only be shown with a compiler setting the build does not use: no parameter names. */
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

    static class Invoices {
        @Leased(name = "invoice-#{#invoiceId}", kind = LeaseKind.CORRECTNESS)
        public void byName(long invoiceId) {
        }

        @Leased(name = "invoice-#{#p0}-#{#a0}", kind = LeaseKind.CORRECTNESS)
        public void byPosition(long invoiceId) {
        }
    }
}
