package dev.lease.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.lease.memory.InMemoryLeaseBackend;

/**
 * The in-memory backend, created only when a {@code lease.*backend} property names it: an application that
 * forgot to configure a real backend must fail, not silently lock within one JVM.
 */
@AutoConfiguration(before = LeaseAutoConfiguration.class)
@ConditionalOnLeaseBackend(BackendType.IN_MEMORY)
public class InMemoryLeaseAutoConfiguration {

    private static final Log log = LogFactory.getLog(InMemoryLeaseAutoConfiguration.class);

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public InMemoryLeaseAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean
    InMemoryLeaseBackend inMemoryLeaseBackend() {
        log.info("In-memory leases are exclusive within this JVM only; use them for tests and single-instance apps.");
        return new InMemoryLeaseBackend();
    }
}
