package dev.lease.fence.http;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * Reactor Netty resources of the application's own: with WebFlux on the test class path Boot gives every application
 * a factory on Reactor Netty's global resources, and closing one application would shut them down for the WebClients
 * of every other application in this JVM ("event executor terminated").
 */
@Configuration(proxyBeanMethods = false)
class OwnReactorResources {

    @Bean
    ReactorResourceFactory reactorResourceFactory() {
        ReactorResourceFactory resources = new ReactorResourceFactory();
        resources.setUseGlobalResources(false);
        return resources;
    }
}
