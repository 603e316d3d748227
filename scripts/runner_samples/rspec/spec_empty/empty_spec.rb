# no examples yet
