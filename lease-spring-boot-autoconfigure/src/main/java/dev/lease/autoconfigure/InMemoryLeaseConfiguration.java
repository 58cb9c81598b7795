package dev.lease.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.lease.memory.InMemoryLeaseBackend;

/**
 * The in-memory backend, created only when a {@code lease.*backend} property names it: an application that
 * forgot to configure a real backend must fail, not silently lock within one JVM.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnLeaseBackend(BackendType.IN_MEMORY)
class InMemoryLeaseConfiguration {

    private static final Log log = LogFactory.getLog(InMemoryLeaseConfiguration.class);


    @Bean
    @ConditionalOnMissingBean
    InMemoryLeaseBackend inMemoryLeaseBackend() {
        log.info("In-memory leases are exclusive within this JVM only; use them for tests and single-instance apps.");
        return new InMemoryLeaseBackend();
    }
}
