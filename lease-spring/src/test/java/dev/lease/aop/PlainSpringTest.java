package dev.lease.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseTemplate;
import dev.lease.Leased;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.LeaseBackend;

/** {@code @Leased} in a Spring Framework application without Boot: the configuration the README shows. */
class PlainSpringTest {

    @Test
    void leasedMethodsRunUnderTheirLeaseWithAFreshTokenEachTime() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(LeaseConfig.class,
                Invoices.class)) {
            Invoices invoices = context.getBean(Invoices.class);
            long first = invoices.bill(42);
            long second = invoices.bill(42);
            assertThat(first).isPositive();
            assertThat(second).isGreaterThan(first);
            assertThat(invoices.bill(43)).as("another invoice, another lease").isPositive();
        }
    }

    // README: plain Spring
    @Configuration(proxyBeanMethods = false)
    static class LeaseConfig {

        @Bean
        LeaseBackend<?> leaseBackend() {
            return new InMemoryLeaseBackend(); // or new ZooKeeperLeaseBackend(curator, "/leases", sessionTimeout), ...
        }

        @Bean(destroyMethod = "close")
        LeaseEngine leaseEngine(LeaseBackend<?> backend) {
            return new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend, LeaseKind.EFFICIENCY, backend)),
                    LeaseDefaults.standard());
        }

        @Bean
        static LeasedAnnotationBeanPostProcessor leasedAnnotationBeanPostProcessor(ObjectProvider<LeaseTemplate> leases) {
            return new LeasedAnnotationBeanPostProcessor(leases);
        }
    }

    static class Invoices {

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public long bill(long id) {
            return LeaseContext.token().value();
        }
    }
    // end README
}
