module loadgate.test/mattermost-core

go 1.24
